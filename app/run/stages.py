"""What the image and start stages of a cell do, and the tag search of a cell whose image
is missing for its arch (the runner puts each under its budget and decides who is blamed).

The image stage resolves and pulls the component's images and its backend's; the start
stage starts the probe and, when an emulated container dies of the CPU model emulated for
its arch, retries once from scratch with QEMU_CPU=max.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from ecoready.domain.errors import (
    BackendFailed,
    DockerUnavailable,
    EmulatorProblem,
    EmulatorTooOld,
    ImageUnavailable,
    InfraError,
    StageFailed,
)
from ecoready.domain.events import Event, ImageResolved, RunNote, TagsSearched
from ecoready.domain.model import TagSearch
from ecoready.domain.text import one_line
from ecoready.engine.platform import WIDEST_CPU
from ecoready.plan.cells import CellPlan
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.exits import EMULATOR_FIX, EMULATOR_UPGRADE
from ecoready.probe_api.probe import Probe
from ecoready.registry.tag_search import search_tags

log = logging.getLogger("ecoready.runner")
TAG_SEARCH_BUDGET = 60.0  # seconds a missing cell's tag search may take (its manifests are bounded too)

Emit = Callable[[Event], None]


async def image_stage(cell: CellPlan, ctx: ProbeContext, probe: Probe, emit: Emit) -> str:
    """Resolve and pull the cell's image, the probe's extra images and its backend's, on
    the cell's host; the detail names what was found and where."""
    images = ctx.run.images  # the cell's host's: pulls are per host
    info = await images.ensure(cell.component.image, cell.arch)
    emit(ImageResolved(cell.id, info))
    for extra in probe.images():  # e.g. PMM's client image: part of the component
        await images.ensure(extra, cell.arch)
    if cell.backend is not None:  # pulled here, within the image budget, not at start
        try:
            await images.ensure(cell.backend.image, cell.arch)
        except ImageUnavailable as exc:
            raise BackendFailed(
                f"no usable image for {cell.arch}: {exc}", subject=cell.backend.id, behind=exc.cause
            ) from None
        except (BackendFailed, DockerUnavailable):
            raise
        except InfraError as exc:  # e.g. its registry unreachable: the backend is blamed, once
            raise BackendFailed(str(exc), subject=cell.backend.id, behind=exc.cause) from None
    return f"{info.found_as} {info.digest[:19]}" + (f" via mirror {info.mirror}" if info.mirror else "")


async def start_stage(cell: CellPlan, ctx: ProbeContext, probe: Probe, emit: Emit) -> str:
    """Start the probe; when an emulated container dies of `CPU does not support
    x86-64-v2` (an old qemu-user) or of an illegal instruction under the narrower CPU
    model emulated for its arch, retry once from scratch with QEMU_CPU=max in every
    container of the cell and say in the detail that the emulated CPU was the problem."""
    begun = time.monotonic()
    try:
        await probe.start()
        return f"ready in {time.monotonic() - begun:.1f} s"
    except EmulatorTooOld as first:
        if not cell.emulated or ctx.extra_env.get("QEMU_CPU") == WIDEST_CPU:
            raise
        problem = f"the {cell.arch} {first.problem}"
        fix = first.fix or EMULATOR_FIX
    emit(RunNote(f"{problem}; cells of that arch were retried with QEMU_CPU=max ({fix})"))
    await ctx.reset()
    ctx.extra_env["QEMU_CPU"] = WIDEST_CPU
    begun = time.monotonic()
    try:
        await probe.start()
    except EmulatorTooOld as again:
        raise EmulatorProblem(f"{problem}, even with QEMU_CPU=max ({again})", fix=EMULATOR_UPGRADE) from None
    except StageFailed as exc:
        raise StageFailed(f"{exc} (after a retry with QEMU_CPU=max: {problem})", cause=exc.cause) from None
    return f"ready in {time.monotonic() - begun:.1f} s with QEMU_CPU=max ({problem}; {fix})"


async def search_tags_of(cell: CellPlan, ctx: ProbeContext, emit: Emit) -> None:
    """The cell's image is not published for its arch: look through its repository's
    tags for one that is (the migration plan's `use TAG` / `upgrade to`). The search's
    trouble is its own: it is recorded, and never changes the cell."""
    component = cell.component
    try:
        async with asyncio.timeout(TAG_SEARCH_BUDGET):
            found = await search_tags(ctx.run.images.registry, component.id, component.image, cell.arch)
    except TimeoutError:
        found = TagSearch(component.id, cell.arch, component.image, error=f"took over {TAG_SEARCH_BUDGET:.0f} s")
    except Exception as exc:
        log.warning("tag search of %s failed: %s", cell.id, exc)
        found = TagSearch(component.id, cell.arch, component.image, error=f"internal error: {one_line(str(exc))}")
    emit(TagsSearched(cell.id, found))
