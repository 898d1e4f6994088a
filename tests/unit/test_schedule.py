from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ecoready.domain.model import HostFacts, Profile
from ecoready.matrix.load import parse
from ecoready.plan.cells import make_plan
from ecoready.plan.schedule import Scheduler, WeightedSlots, capacity, history_seconds, longest_first, weight

MATRIX = parse(
    '[[components]]\nid="db"\ncategory="server"\nprobe="server"\nimage="x/db:1"\n'
    '[[components]]\nid="cluster"\ncategory="ha"\nprobe="galera"\nimage="x/db:1"\n',
    "m.toml",
)
HOST = HostFacts("local", "amd64", emulated_arches=("arm64",), cpus=2, memory_bytes=24 * 2**30)


def test_weights_and_capacity() -> None:
    cells = {c.id: c for c in make_plan(MATRIX, [HOST]).cells}
    assert weight(cells["db/amd64"]) == 1
    assert weight(cells["db/arm64"]) == 3  # emulated
    assert weight(cells["cluster/amd64"]) == 1  # three servers, one starting at a time
    assert weight(cells["cluster/arm64"]) == 3
    assert capacity(HOST) == 10
    assert capacity(HostFacts("big", "amd64", cpus=64, memory_bytes=8 * 2**30)) == 5  # memory bounds it
    assert capacity(HostFacts("small", "amd64", cpus=2, memory_bytes=4 * 2**30)) == 2
    assert capacity(None) == 10


def test_longest_first_uses_history_then_kind_defaults() -> None:
    cells = make_plan(MATRIX, [HOST]).cells
    order = [c.id for c in longest_first(cells, {})]
    assert order == ["cluster/arm64", "cluster/amd64", "db/arm64", "db/amd64"]
    order = [c.id for c in longest_first(cells, {"db/amd64": 999.0})]
    assert order[0] == "db/amd64"


def test_history_is_read_leniently(tmp_path: Path) -> None:
    assert history_seconds(tmp_path / "none") == {}
    (tmp_path / "20260101T000000Z-a.json").write_text(json.dumps({"cells": [{"id": "db/amd64", "seconds": 4.2}]}))
    (tmp_path / "20270101T000000Z-b.json").write_text("{not json")
    assert history_seconds(tmp_path) == {"db/amd64": 4.2}


def test_fixed_concurrency_weighs_every_cell_one() -> None:
    scheduler = Scheduler.for_run([HOST], Profile.QUICK, 3)
    assert scheduler.slots.units == 3 and scheduler.fixed
    assert all(scheduler.weight(c) == 1 for c in make_plan(MATRIX, [HOST]).cells)
    assert not Scheduler.for_run([HOST], Profile.FULL, None).fixed


async def take(
    slots: WeightedSlots, order: list[str], name: str, units: int, expected: float, hold: float = 0.0
) -> None:
    """A cell: wait for its units, note that it started, hold them `hold` seconds."""
    grant = await slots.acquire(units, expected)
    try:
        order.append(name)
        await asyncio.sleep(hold)
    finally:
        slots.release(grant)


async def test_waiters_are_served_longest_expected_first_whatever_order_they_asked_in() -> None:
    slots = WeightedSlots(2)
    order: list[str] = []
    first = await slots.acquire(2, 10)
    tasks = [
        asyncio.create_task(take(slots, order, name, 2, e)) for name, e in (("short", 5), ("long", 60), ("mid", 20))
    ]
    await asyncio.sleep(0)
    slots.release(first)
    await asyncio.gather(*tasks)
    assert order == ["long", "mid", "short"]


async def test_a_short_cell_fills_units_the_heavy_first_waiter_cannot_use_yet() -> None:
    slots = WeightedSlots(4)
    order: list[str] = []
    cluster = await slots.acquire(3, expected=60)  # 1 unit left; heavy needs 2 until ~60 s

    heavy = asyncio.create_task(take(slots, order, "heavy", 2, 45, hold=0.01))
    await asyncio.sleep(0)
    light = asyncio.create_task(take(slots, order, "light", 1, 8, hold=0.01))  # done long before the cluster: goes now
    await asyncio.sleep(0.05)
    assert order == ["light"]
    slots.release(cluster)
    await asyncio.gather(heavy, light)
    assert order == ["light", "heavy"]
    assert slots.free == 4


async def test_a_cell_that_would_delay_the_first_waiter_waits_behind_it() -> None:
    slots = WeightedSlots(4)
    order: list[str] = []
    soon = await slots.acquire(2, expected=0.05)  # heavy can start when this ends
    await slots.acquire(1, expected=600)

    heavy = asyncio.create_task(take(slots, order, "heavy", 3, 100, hold=0.01))
    await asyncio.sleep(0)
    # fits in the free unit, but would still hold it when `soon` ends: heavy would wait
    longer = asyncio.create_task(take(slots, order, "longer", 1, 30, hold=0.01))
    await asyncio.sleep(0.02)
    assert order == []
    slots.release(soon)
    await asyncio.sleep(0.005)
    assert order == ["heavy"]  # 3 of 4 units: longer waits for heavy to finish
    await asyncio.gather(heavy, longer)
    assert order == ["heavy", "longer"]


async def test_a_holder_past_its_expected_end_lets_nothing_past_on_time() -> None:
    slots = WeightedSlots(4)
    order: list[str] = []
    overdue = await slots.acquire(3, expected=0.0)  # expected already over: the wait is open-ended
    await asyncio.sleep(0.01)

    heavy = asyncio.create_task(take(slots, order, "heavy", 4, 50))  # needs every unit: none spare
    await asyncio.sleep(0)
    light = asyncio.create_task(take(slots, order, "light", 1, 1))
    await asyncio.sleep(0.02)
    assert order == []  # would have to end before "now": nothing can
    slots.release(overdue)
    await asyncio.gather(heavy, light)
    assert order[0] == "heavy"


async def test_a_cancelled_waiter_gives_nothing_away() -> None:
    slots = WeightedSlots(2)
    both = await slots.acquire(2)
    waiter = asyncio.create_task(slots.acquire(1))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    slots.release(both)
    assert slots.free == 2
    assert (await slots.acquire(5)).units == 2  # asking for more than exists takes everything


async def test_a_cancelled_first_waiter_lets_the_next_one_in() -> None:
    slots = WeightedSlots(3)
    await slots.acquire(2, expected=60)
    heavy = asyncio.create_task(slots.acquire(3, expected=100))
    await asyncio.sleep(0)
    light = asyncio.create_task(slots.acquire(1, expected=90))  # would delay heavy: waits
    await asyncio.sleep(0)
    assert not light.done()
    heavy.cancel()
    await asyncio.gather(heavy, return_exceptions=True)
    assert (await asyncio.wait_for(light, 1)).units == 1
