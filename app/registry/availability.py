"""`ecoready images`: every component's image on every arch, asked of the registries at
once, without starting a container, and the tool images a run of the matrix's profile
needs (the bench stage's sysbench image, or the public base a derived one is made from).
One row per (component, arch): those pairs are the
"references" the registry budget is counted against (see bench/registry.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from ecoready.domain.blame import Cause
from ecoready.domain.errors import LoginRequired, MirrorGap, RegistryError
from ecoready.domain.images import Availability, ImageCheck, ImagesReport, Verdict
from ecoready.matrix.document import Matrix
from ecoready.matrix.kinds import KINDS
from ecoready.registry.client import RegistryClient
from ecoready.report import mirror_words


def pairs(
    matrix: Matrix, only: Sequence[str] | None = None, arches: Sequence[str] | None = None
) -> list[tuple[str, str]]:
    """(component id, arch) in matrix order; a component's own arches narrow the matrix's."""
    out = []
    for component in matrix.components:
        if only and component.id not in only:
            continue
        for arch in component.arches or matrix.arches:
            if not arches or arch in arches:
                out.append((component.id, arch))
    return out


async def check_images(
    matrix: Matrix,
    client: RegistryClient,
    *,
    only: Sequence[str] | None = None,
    arches: Sequence[str] | None = None,
) -> ImagesReport:
    started = time.monotonic()
    at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    wanted = pairs(matrix, only, arches)

    unchecked: dict[str, tuple[int, str]] = {}
    troubled: dict[tuple[str, Cause], int] = {}  # (mirror, cause) -> images it failed

    def failed(reference: str, arch: str, exc: RegistryError) -> Availability:
        if isinstance(exc, LoginRequired):  # the registry answered: a login, the user's to give
            return Availability(reference, arch, Verdict.LOCKED, exc.registry, detail=str(exc), mirror=exc.mirror)
        if isinstance(exc, MirrorGap):  # the mirror's trouble, said on its rows and once with its remedy
            key = (exc.registry, exc.cause or Cause.MIRROR_GAP)
            troubled[key] = troubled.get(key, 0) + 1
        else:
            count, _ = unchecked.get(exc.registry, (0, ""))
            unchecked[exc.registry] = (count + 1, exc.reason)
        return Availability(
            reference, arch, Verdict.ERROR, exc.registry, detail=str(exc), mirror=exc.mirror, fallback=exc.fallback
        )

    async def one(component_id: str, arch: str) -> ImageCheck:
        component = matrix.component(component_id)
        try:
            found = await client.resolve(component.image, arch)
        except RegistryError as exc:
            found = failed(component.image, arch, exc)
        return ImageCheck(component.id, component.name, arch, found)

    async def tool(reference: str, name: str, arch: str) -> ImageCheck:
        try:
            found = await client.resolve(reference, arch)
        except RegistryError as exc:
            found = failed(reference, arch, exc)
        return ImageCheck(TOOL_SYSBENCH, name, arch, found)

    tools = [tool(*sysbench, arch) for arch in bench_arches(matrix, wanted) if (sysbench := matrix.sysbench_image())]
    checks = await asyncio.gather(*(one(c, a) for c, a in wanted), *tools)
    return ImagesReport(
        matrix=matrix.path,
        checked_at=at,
        seconds=round(time.monotonic() - started, 3),
        checks=tuple(checks),
        registries=client.statuses(),
        notes=(*registry_notes(unchecked, "image"), *mirror_notes(troubled)),
    )


TOOL_SYSBENCH = "tool:sysbench"  # the row of the bench stage's sysbench image (no component id has a colon)


def bench_arches(matrix: Matrix, wanted: Sequence[tuple[str, str]]) -> list[str]:
    """The arches on which a benchmarked component of `wanted` runs, in matrix order."""
    benched = {arch for cid, arch in wanted if KINDS[matrix.component(cid).probe].benchmarks}
    return [arch for arch in dict.fromkeys(a for _, a in wanted) if arch in benched]


def registry_notes(unchecked: Mapping[str, tuple[int, str]], what: str = "cell") -> list[str]:
    """One line per registry that could not be asked (the run's report says so once, not
    once per cell): `registry docker.io: unreachable (connection refused): 12 cells not checked`."""
    return [
        f"registry {registry}: {reason}: {count} {what}{'s' if count != 1 else ''} not checked"
        for registry, (count, reason) in sorted(unchecked.items())
    ]


def mirror_notes(troubled: Mapping[tuple[str, Cause], int]) -> list[str]:
    """One line per mirror and trouble, with its remedy: `mirror m:5000/hub lacks it: 3
    images: copy the image into the mirror …, or allow fallback …`."""
    return [
        f"mirror {mirror} {mirror_words.SHORT[cause]}: {count} image{'s' if count != 1 else ''}: "
        f"{mirror_words.remedy(cause, mirror)}"
        for (mirror, cause), count in sorted(troubled.items())
    ]


def exit_code(report: ImagesReport) -> int:
    """0 every pair available; 3 a registry could not be asked; 1 otherwise (missing,
    mislabelled, or locked: a login to give)."""
    verdicts = [c.availability.verdict for c in report.checks]
    if Verdict.ERROR in verdicts:
        return 3
    return 0 if all(v is Verdict.AVAILABLE for v in verdicts) else 1
