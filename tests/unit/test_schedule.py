from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from app.config import parse
from app.model import HostFacts, Profile
from app.plan import make_plan
from app.schedule import Scheduler, WeightedSlots, capacity, history_seconds, longest_first, weight

MATRIX = parse(
    '[[components]]\nid="db"\ncategory="server"\nprobe="server"\nimage="x/db:1"\n'
    '[[components]]\nid="cluster"\ncategory="ha"\nprobe="galera"\nimage="x/db:1"\n',
    "m.toml",
)
HOST = HostFacts("local", "amd64", emulated_arches=("arm64",), cpus=2, memory_bytes=24 * 2**30)


def test_weights_and_capacity() -> None:
    cells = {c.id: c for c in make_plan(MATRIX, [HOST]).cells}
    assert weight(cells["db/amd64"]) == 1
    assert weight(cells["db/arm64"]) == 2  # emulated
    assert weight(cells["cluster/amd64"]) == 2  # three servers
    assert weight(cells["cluster/arm64"]) == 3
    assert capacity(HOST) == 6
    assert capacity(HostFacts("big", "amd64", cpus=64, memory_bytes=8 * 2**30)) == 5  # memory bounds it
    assert capacity(HostFacts("small", "amd64", cpus=2, memory_bytes=4 * 2**30)) == 2
    assert capacity(None) == 6


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


async def test_a_light_waiter_overtakes_a_heavy_head_that_does_not_fit() -> None:
    slots = WeightedSlots(4)
    order: list[str] = []

    async def cell(name: str, units: int, hold: float) -> None:
        async with slots.hold(units):
            order.append(name)
            await asyncio.sleep(hold)

    first = asyncio.create_task(cell("cluster", 3, 0.05))
    await asyncio.sleep(0)
    heavy = asyncio.create_task(cell("heavy", 2, 0.01))  # must wait for the cluster
    await asyncio.sleep(0)
    light = asyncio.create_task(cell("light", 1, 0.01))  # fits in the unit left: goes first
    await asyncio.gather(first, heavy, light)
    assert order == ["cluster", "light", "heavy"]
    assert slots.free == 4


async def test_a_heavy_head_is_overtaken_a_bounded_number_of_times() -> None:
    slots = WeightedSlots(4)
    order: list[str] = []
    await slots.acquire(3)

    async def cell(name: str, units: int) -> None:
        async with slots.hold(units):
            order.append(name)
            await asyncio.sleep(0.001)

    heavy = asyncio.create_task(cell("heavy", 4))
    await asyncio.sleep(0)
    lights = [asyncio.create_task(cell(f"light{i}", 1)) for i in range(WeightedSlots.OVERTAKES + 3)]
    await asyncio.sleep(0.05)
    assert order == [f"light{i}" for i in range(WeightedSlots.OVERTAKES)]  # then they wait behind heavy
    slots.release(3)
    await asyncio.gather(heavy, *lights)
    assert order[WeightedSlots.OVERTAKES] == "heavy"
    assert slots.free == 4


async def test_a_cancelled_waiter_gives_nothing_away() -> None:
    slots = WeightedSlots(2)
    await slots.acquire(2)
    waiter = asyncio.create_task(slots.acquire(1))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    slots.release(2)
    assert slots.free == 2
    assert await slots.acquire(5) == 2  # asking for more than exists takes everything
