"""`together`: concurrent awaits that never outlive their caller (engine/aio.py)."""

import asyncio

import pytest

from ecoready.domain.errors import StageFailed
from ecoready.engine.aio import together


async def test_results_come_in_order() -> None:
    async def after(seconds: float, value: str) -> str:
        await asyncio.sleep(seconds)
        return value

    assert await together(after(0.05, "a"), after(0.01, "b")) == ["a", "b"]


async def test_the_first_failure_is_raised_as_is_and_cancels_the_others() -> None:
    finished: list[str] = []

    async def slow() -> str:
        await asyncio.sleep(5)
        finished.append("slow")
        return "slow"

    async def failing() -> str:
        await asyncio.sleep(0.01)
        raise StageFailed("node2 did not start")

    task = asyncio.ensure_future(slow())
    with pytest.raises(StageFailed, match="node2 did not start"):
        await together(task, failing())
    assert task.cancelled() and finished == []


async def test_a_cancelled_caller_cancels_them_all_before_it_ends() -> None:
    children = [asyncio.ensure_future(asyncio.sleep(5)) for _ in range(3)]
    caller = asyncio.create_task(together(*children))
    await asyncio.sleep(0.01)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert all(child.cancelled() for child in children)
