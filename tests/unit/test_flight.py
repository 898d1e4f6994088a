"""The one single-flight (app/domain/flight.py): an asker cancelled leaves alone, the last
one to leave stops the work, a failure is everyone's and then forgotten, a success is kept
only as a memo. Each users' own test of a cancelled first asker is beside its other tests
(tests/unit/test_flight_users.py)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from ecoready.domain.errors import EcoreadyError, RegistryError
from ecoready.domain.flight import Flights


@dataclass
class Work:
    """Work that answers when told to, and says how it went."""

    answer: str = "done"
    failure: Exception | None = None
    release: asyncio.Event = field(default_factory=asyncio.Event)
    started: int = 0
    cancelled: int = 0
    ended: int = 0
    tasks: list[asyncio.Task[object] | None] = field(default_factory=list)

    async def __call__(self) -> str:
        self.started += 1
        self.tasks.append(asyncio.current_task())
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.ended += 1
        if self.failure is not None:
            raise self.failure
        return self.answer


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def askers(flights: Flights[str, str], work: Work, count: int) -> list[asyncio.Task[str]]:
    tasks = [asyncio.create_task(flights.ask("k", work)) for _ in range(count)]
    await settle()
    return tasks


def test_a_cancelled_first_asker_leaves_the_work_and_the_other_asker_untouched() -> None:
    async def scenario() -> None:
        flights: Flights[str, str] = Flights(remember=False)
        work = Work()
        first, second = await askers(flights, work, 2)
        first.cancel()
        await settle()
        assert first.cancelled() and not second.done()
        assert work.cancelled == 0 and work.tasks[0] is not first  # the work is its own task
        work.release.set()
        assert await second == "done"
        assert work.started == 1

    asyncio.run(scenario())


def test_a_cancelled_second_asker_leaves_the_first_its_answer() -> None:
    async def scenario() -> None:
        flights: Flights[str, str] = Flights(remember=False)
        work = Work()
        first, second = await askers(flights, work, 2)
        second.cancel()
        await settle()
        work.release.set()
        assert await first == "done"
        assert second.cancelled() and work.cancelled == 0 and work.started == 1

    asyncio.run(scenario())


def test_when_every_asker_left_the_work_is_stopped_awaited_and_forgotten() -> None:
    async def scenario() -> None:
        flights: Flights[str, str] = Flights(remember=True)
        work = Work()
        first, second = await askers(flights, work, 2)
        first.cancel()
        await settle()
        assert "k" in flights and work.cancelled == 0
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        # the last asker returned only once the work had ended: nothing outlives its askers
        assert (work.cancelled, work.ended) == (1, 1)
        assert "k" not in flights and flights.under_way() == 0
        assert all(task is None or task.done() for task in work.tasks)
        work.release.set()
        assert await flights.ask("k", work) == "done"  # a later asker starts afresh
        assert work.started == 2

    asyncio.run(scenario())


def test_a_failure_is_handed_to_every_asker_then_forgotten() -> None:
    async def scenario() -> None:
        flights: Flights[str, str] = Flights(remember=True)
        work = Work(failure=RegistryError("r.example", "unreachable"))
        tasks = await askers(flights, work, 3)
        work.release.set()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(result is work.failure for result in results)
        assert "k" not in flights
        work.failure = None
        assert await flights.ask("k", work) == "done"  # tried again
        assert work.started == 2

    asyncio.run(scenario())


@pytest.mark.parametrize("remember", [True, False])
def test_a_success_is_remembered_only_as_a_memo(remember: bool) -> None:
    async def scenario() -> None:
        flights: Flights[str, str] = Flights(remember=remember)
        work = Work()
        work.release.set()
        assert await flights.ask("k", work) == "done"
        work.answer = "again"
        assert await flights.ask("k", work) == ("done" if remember else "again")
        assert work.started == (1 if remember else 2)
        assert ("k" in flights) is remember
        flights.keep("other", "known")
        assert ("other" in flights) is remember

    asyncio.run(scenario())


def test_closing_stops_the_work_and_a_waiting_asker_is_told_so_not_cancelled() -> None:
    async def scenario() -> None:
        flights: Flights[str, str] = Flights(remember=True)
        work = Work()
        (waiting,) = await askers(flights, work, 1)
        await flights.aclose()
        assert work.cancelled == 1 and flights.under_way() == 0
        with pytest.raises(EcoreadyError, match="stopped before its end"):
            await waiting
        assert not waiting.cancelled()

    asyncio.run(scenario())


def test_an_asker_out_of_budget_is_cancelled_by_its_own_timeout_only() -> None:
    async def scenario() -> None:
        flights: Flights[str, str] = Flights(remember=False)
        work = Work()

        async def short() -> str:
            async with asyncio.timeout(0.01):
                return await flights.ask("k", work)

        hurried = asyncio.create_task(short())
        patient = asyncio.create_task(flights.ask("k", work))
        with pytest.raises(TimeoutError):
            await hurried
        assert not patient.done() and work.cancelled == 0
        work.release.set()
        assert await patient == "done"

    asyncio.run(scenario())
