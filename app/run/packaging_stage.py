"""The packaging stage of a driver row: before any container, its package registry says
which version the row's pin resolves to and whether that version ships a prebuilt artifact
for the cell's arch (app/packages/). The finding goes into the cell (an event) and to the
probe, which installs exactly that version in the start stage."""

from __future__ import annotations

from ecoready.domain.drivers import parse_driver
from ecoready.domain.errors import ImageUnavailable, InfraError, MatrixMismatch
from ecoready.domain.packaging import PackagingVerdict
from ecoready.matrix.kinds import KINDS
from ecoready.plan.cells import CellPlan
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.install_cache import report_packaging
from ecoready.report.status_words import packaging_text


async def packaging_stage(cell: CellPlan, ctx: ProbeContext) -> str:
    """The stage's detail; `ImageUnavailable` (not published) when nothing fits the arch
    (the cell is `missing`), `MatrixMismatch` naming the row when the pin names no published version,
    `RegistryError` when the registry could not be asked."""
    kind = KINDS[cell.component.probe]
    option = kind.installs
    assert option is not None
    spec = parse_driver(str(cell.component.options[option]))
    client = ctx.run.packages
    if client is None:
        raise InfraError("this run has no package registry client: the packaging stage cannot ask")
    try:
        packaging = await client.assess(spec, cell.arch, program=kind.program is not None)
    except MatrixMismatch as exc:
        raise MatrixMismatch(f"row {cell.component.id}: {exc}") from None
    report_packaging(ctx, packaging)
    text = f"{' '.join(filter(None, (packaging.package, packaging.version)))}: {packaging_text(packaging)}"
    if packaging.verdict is PackagingVerdict.NOT_ASKED:
        text = f"{text} ({packaging.detail})"
    if packaging.verdict is PackagingVerdict.MISSING:
        raise ImageUnavailable(text)
    return text
