"""The lab build's slots, its memory of step times and the cost table it prints."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from ecoready.domain.errors import EngineError
from ecoready.lab.build import Lab
from ecoready.lab.recipes import ARCHES, LabImage, image_named
from ecoready.lab.schedule import DEFAULT_S, REFERENCE_S, BuildBook, StepCost, build_slots, cost_table


async def test_no_more_builds_at_once_than_slots(tmp_path: Path) -> None:
    book = BuildBook(tmp_path, 2)
    running = 0
    most = 0

    async def step() -> None:
        nonlocal running, most
        async with book.slot():
            running += 1
            most = max(most, running)
            await asyncio.sleep(0.01)
            running -= 1

    await asyncio.gather(*(step() for _ in range(7)))
    assert most == 2


async def test_waiters_are_served_longest_chain_first_and_a_cancelled_one_takes_nothing(tmp_path: Path) -> None:
    book = BuildBook(tmp_path, 1)
    served: list[str] = []
    gate = asyncio.Event()

    async def holder() -> None:
        async with book.slot(0.0):
            await gate.wait()

    async def step(name: str, priority: float) -> None:
        async with book.slot(priority):
            served.append(name)

    held = asyncio.create_task(holder())
    await asyncio.sleep(0)
    waiters = [
        asyncio.create_task(step(n, p)) for n, p in (("base trixie", 260.0), ("tools", 85.0), ("connectors", 380.0))
    ]
    gone = asyncio.create_task(step("cancelled", 1000.0))
    await asyncio.sleep(0.01)
    gone.cancel()
    gate.set()
    await asyncio.gather(held, *waiters)
    assert served == ["connectors", "base trixie", "tools"]
    async with book.slot():  # the slot came back
        pass


def test_a_step_is_expected_to_take_what_it_took_last_time(tmp_path: Path) -> None:
    book = BuildBook(tmp_path, 2)
    assert book.expected("connectors:bookworm", "arm64", True) == REFERENCE_S[("connectors:bookworm", "arm64")]
    assert book.expected("not-listed:1", "amd64", False) == DEFAULT_S["native"]
    book.record(StepCost("connectors:bookworm", "arm64", 123.4, True, True))
    book.record(StepCost("mariadb:10.11", "arm64", 0.0, True, False))  # current: says nothing
    book.save()
    again = BuildBook(tmp_path, 2)
    assert again.expected("connectors:bookworm", "arm64", True) == 123.4
    assert again.expected("mariadb:10.11", "arm64", True) == REFERENCE_S[("mariadb:10.11", "arm64")]


def test_a_damaged_times_file_is_no_history(tmp_path: Path) -> None:
    (tmp_path / "build-times.json").write_text("{not json")
    assert BuildBook(tmp_path, 1).expected("tools:bookworm", "amd64", False) == REFERENCE_S[("tools:bookworm", "amd64")]


def test_the_cost_table_lists_built_steps_slowest_first_with_the_sums() -> None:
    costs = [
        StepCost("base bookworm", "amd64", 31.0, False, True),
        StepCost("connectors:bookworm", "arm64", 380.0, True, True),
        StepCost("mariadb:10.11", "amd64", 0.0, False, False),
    ]
    lines = cost_table(costs, 600.0)
    assert "connectors:bookworm" in lines[1] and "emulated" in lines[1]
    assert "base bookworm" in lines[2] and "native" in lines[2]
    assert lines[-1] == "lab: 2 step(s) built in 10.0 min (380 s emulated, 31 s native build time), 1 reused"
    assert cost_table(costs[2:], 1.0) == ["lab: nothing to build (1 step(s) current) in 1 s"]


def test_jobs_follow_the_environment_else_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ECOREADY_LAB_JOBS", "3")
    assert build_slots() == 3
    monkeypatch.setenv("ECOREADY_LAB_JOBS", "zero")
    assert build_slots() == 2 * len(os.sched_getaffinity(0))


class _TimedLab(Lab):
    """A lab whose steps only take time: what `build_images` does around them."""

    seconds: dict[str, float]
    events: list[str]

    async def start_builders(self, images: Sequence[LabImage], arches: Sequence[str]) -> None:
        pass

    async def image(self, image: LabImage, arch: str) -> str:
        async with self.book.slot(self.chain(image, arch)):
            if self.seconds[image.name] < 0:
                raise EngineError(f"{image.key} for {arch} did not build")
            await asyncio.sleep(self.seconds[image.name])
        self.events.append(f"built {image.key} {arch}")
        return image.key


def _timed_lab(tmp_path: Path, seconds: dict[str, float]) -> _TimedLab:
    lab = _TimedLab(cast(Any, None), lambda line: None, mirror="http://mirror.invalid/debian", lab_dir=tmp_path)
    lab.seconds, lab.events = seconds, []
    return lab


async def test_an_image_is_published_as_soon_as_its_arches_are_built(tmp_path: Path) -> None:
    lab = _timed_lab(tmp_path, {"quick": 0.01, "slow": 0.3})
    images = [LabImage(name, "1", "tools", "bookworm", ()) for name in ("quick", "slow")]

    async def publish(image: LabImage) -> None:
        lab.events.append(f"published {image.key}")

    await lab.build_images(images, ARCHES, then=publish)
    assert lab.events.index("published quick:1") < lab.events.index("built slow:1 amd64")
    assert lab.events[-1] == "published slow:1"
    assert lab.events.count("published quick:1") == 1


async def test_a_failed_build_publishes_nothing_more_and_is_raised(tmp_path: Path) -> None:
    lab = _timed_lab(tmp_path, {"broken": -1, "slow": 0.3})
    images = [LabImage(name, "1", "tools", "bookworm", ()) for name in ("broken", "slow")]

    async def publish(image: LabImage) -> None:
        lab.events.append(f"published {image.key}")

    with pytest.raises(EngineError, match="broken:1"):
        await lab.build_images(images, ARCHES, then=publish)
    assert not [event for event in lab.events if event.startswith("published")]


def test_an_image_built_on_another_chains_its_recipe_and_its_expected_time(tmp_path: Path) -> None:
    lab = Lab(cast(Any, None), lambda line: None, mirror="http://mirror.invalid/debian", lab_dir=tmp_path)
    slim, full = image_named("python:3.13-slim"), image_named("python:3.13")
    assert full.on == slim.key
    # a change to the image below (its recipe) is a change to this one
    assert lab.recipe(full, "arm64") == lab.image_recipe(full, lab.recipe(slim, "arm64"))
    assert lab.recipe(full, "arm64") != lab.image_recipe(full, lab.base_recipe(full.suite, "arm64"))
    # its chain (the build order's priority) is its own time on top of the other's chain
    assert lab.chain(full, "arm64") == lab.book.expected(full.key, "arm64", True) + lab.chain(slim, "arm64")
