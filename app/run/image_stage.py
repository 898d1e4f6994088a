"""What a cell's image stage does: resolve and pull the component's images and its
backend's on the cell's host; and, when the image is missing for the cell's arch, the tag
search of its repository (the runner puts the stage under its budget and decides who is
blamed; the search's trouble is its own).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ecoready.domain.errors import BackendFailed, DockerUnavailable, ImageUnavailable, InfraError
from ecoready.domain.events import Event, ImageResolved, TagsSearched
from ecoready.domain.model import TagSearch
from ecoready.domain.text import one_line
from ecoready.plan.cells import CellPlan
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.probe import Probe
from ecoready.registry.tag_search import search_tags
from ecoready.report.mirror_words import via

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
    return " ".join(w for w in (info.found_as, info.digest[:19], via(info.mirror, info.fallback)) if w)


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
