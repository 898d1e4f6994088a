import asyncio

import pytest

from ecoready.engine.aio import to_the_end


async def test_cleanup_finishes_even_when_cancelled_twice() -> None:
    done: list[str] = []

    async def cleanup() -> None:
        await asyncio.sleep(0.2)
        done.append("cleaned")

    async def cell() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            await to_the_end(cleanup())

    task = asyncio.create_task(cell())
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.sleep(0.05)
    task.cancel()  # a second Ctrl-C while cleaning up
    with pytest.raises(asyncio.CancelledError):
        await task
    assert done == ["cleaned"]
