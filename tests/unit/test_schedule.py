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
    assert capacity(HOST) == 4
    assert capacity(HostFacts("big", "amd64", cpus=64, memory_bytes=8 * 2**30)) == 5  # memory bounds it
    assert capacity(None) == 4


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


async def test_weighted_slots_are_first_come_first_served() -> None:
    slots = WeightedSlots(4)
    order: list[str] = []

    async def cell(name: str, units: int, hold: float) -> None:
        async with slots.hold(units):
            order.append(name)
            await asyncio.sleep(hold)

    first = asyncio.create_task(cell("a", 3, 0.05))
    await asyncio.sleep(0)
    heavy = asyncio.create_task(cell("heavy", 4, 0.01))  # must wait for a
    await asyncio.sleep(0)
    light = asyncio.create_task(cell("light", 1, 0.01))  # fits now, but must not overtake heavy
    await asyncio.gather(first, heavy, light)
    assert order == ["a", "heavy", "light"]
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
