"""The bench gate and the record of what ran beside a bench (probe_api/activity.py)."""

from __future__ import annotations

import asyncio

from ecoready.probe_api.activity import BenchGate, HostActivity


async def test_a_bench_waits_for_pulls_under_way_and_keeps_new_ones_out() -> None:
    gate, log = BenchGate(), []

    async def pull(name: str, seconds: float) -> None:
        async with gate.shared():
            log.append(f"{name} in")
            await asyncio.sleep(seconds)
            log.append(f"{name} out")

    async def bench(name: str) -> None:
        async with gate.alone():
            log.append(f"{name} in")
            await asyncio.sleep(0.02)
            log.append(f"{name} out")

    first = asyncio.create_task(pull("pull1", 0.05))
    await asyncio.sleep(0.01)
    benches = [asyncio.create_task(bench("bench1")), asyncio.create_task(bench("bench2"))]
    await asyncio.sleep(0.01)
    late = asyncio.create_task(pull("pull2", 0.01))  # arrives while a bench waits: after it
    await asyncio.gather(first, *benches, late)
    assert log[:2] == ["pull1 in", "pull1 out"]
    # the benches one at a time, the late pull never inside one
    spans = [log[i : i + 2] for i in range(2, len(log), 2)]
    assert all(a.split()[0] == b.split()[0] and a.endswith("in") and b.endswith("out") for a, b in spans), log
    assert log.index("pull2 in") > log.index("bench1 out")


def test_a_window_sees_what_ran_beside_it_but_not_its_own_cell() -> None:
    activity = HostActivity()
    activity.begin("other/amd64", "start")
    with activity.window("db/amd64") as beside:
        activity.begin("db/amd64", "bench")
        activity.begin("late/amd64", "image")
        activity.end("late/amd64", "image")
    with activity.window("db/amd64") as after:
        pass
    assert beside == {"other/amd64 start", "late/amd64 image"}
    assert after == {"other/amd64 start"}  # still under way
    activity.end("other/amd64", "start")
    with activity.window("db/amd64") as alone:
        pass
    assert alone == set()
