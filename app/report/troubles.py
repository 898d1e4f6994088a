"""What many cells fail by at once (pure): a registry that could not be asked, a backend
that could not be had, a host's engine unreachable or lost. Each such trouble is said once
per run with the cells it cost and the way out (`infra_lines`), not once per cell. Which
causes are shared, and by what, is data: `CauseFacts.shared` (`domain/blame.py`), keyed by
a `Trouble`, which run notes about the same trouble carry too (`Note.about`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ecoready.domain.blame import Cause, Shared, Trouble
from ecoready.domain.model import CellResult, Report
from ecoready.domain.text import plural
from ecoready.report.reasons import ENGINE_REMEDY, Advice, advice, registry_remedy, why


@dataclass(frozen=True)
class RegistryTrouble:
    """Cells that all failed because one registry could not be asked."""

    registry: str
    reason: str
    cells: tuple[str, ...]


def trouble(cell: CellResult) -> tuple[Trouble, str] | None:
    """(what, why) when the cell could not run because of something many cells share: a
    registry, a backend, the engine (`registry docker.io`, `unreachable (timed out)`), so
    that it is said once per run, not once per cell."""
    said_ = why(cell)
    if said_.blame is None or said_.blame.facts.shared is None:
        return None
    shared = said_.blame.facts.shared
    return Trouble(shared, cell.host if shared is Shared.ENGINE else said_.blame.subject), said_.detail


def registry_failure(cell: CellResult) -> tuple[str, str] | None:
    """(registry, reason) when the cell is `error` because its image's registry could not
    be asked (not a backend's: that cell says `backend …`)."""
    said_ = why(cell)
    if said_.cause is not Cause.REGISTRY or said_.blame is None:
        return None
    return said_.blame.subject, said_.detail


def backend_failure(cell: CellResult) -> tuple[str, str, Cause | None] | None:
    """(backend, why, the cause behind) when the cell is `error` because its backend could
    not be had."""
    said_ = why(cell)
    if said_.cause is not Cause.BACKEND or said_.blame is None:
        return None
    return said_.blame.subject, said_.detail, said_.blame.behind


def registry_troubles(report: Report) -> list[RegistryTrouble]:
    """Cells whose registry could not be asked, one entry per registry and reason."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for cell in report.cells.values():
        found = registry_failure(cell)
        if found:
            grouped.setdefault(found, []).append(cell.id)
    return [RegistryTrouble(reg, reason, tuple(sorted(ids))) for (reg, reason), ids in sorted(grouped.items())]


def backend_troubles(report: Report) -> dict[tuple[str, str, Cause | None], list[str]]:
    """(backend, why, the cause behind) -> the cells that could not run because of it."""
    grouped: dict[tuple[str, str, Cause | None], list[str]] = {}
    for cell in report.cells.values():
        found = backend_failure(cell)
        if found:
            grouped.setdefault(found, []).append(cell.id)
    return grouped


def engine_troubles(report: Report) -> dict[tuple[Trouble, str], list[str]]:
    """(engine, why) -> the cells it could not run (unreachable, or lost mid-run)."""
    grouped: dict[tuple[Trouble, str], list[str]] = {}
    for cell in report.cells.values():
        found = trouble(cell)
        if found is not None and found[0].shared is Shared.ENGINE:
            grouped.setdefault(found, []).append(cell.id)
    return grouped


def infra_lines(report: Report) -> list[str]:
    """`registry docker.io: unreachable (connection refused): 12 cells not checked; way out: …`,
    and `backend mysql-8.4: …: 3 cells not checked`: each trouble once, with the way out."""
    lines = [
        f"registry {t.registry}: {t.reason}: {plural(len(t.cells), 'cell')} not checked; "
        f"way out: {registry_remedy(t.registry)}"
        for t in registry_troubles(report)
    ]
    for (backend, why_, behind), cells in sorted(backend_troubles(report).items(), key=lambda item: item[0][:2]):
        out = "the registry of its image cannot be asked (above)" if behind is Cause.REGISTRY else ""
        out = out or "fix it (its own row says why)"
        lines.append(f"backend {backend}: {why_}: {plural(len(cells), 'cell')} not checked; way out: {out}")
    engines = sorted(engine_troubles(report).items(), key=lambda item: (item[0][0].words, item[0][1]))
    for (engine, why_), cells in engines:
        lines.append(f"{engine.words}: {why_}: {plural(len(cells), 'cell')} not checked; way out: {ENGINE_REMEDY}")
    return lines


def advice_to_list(report: Report) -> list[Advice]:
    """The advice a view lists cell by cell: registry failures are said once, by
    `infra_lines`, when more than one cell shares them."""
    collapsed = {cid for t in registry_troubles(report) if len(t.cells) > 1 for cid in t.cells}
    collapsed |= {cid for cells in backend_troubles(report).values() if len(cells) > 1 for cid in cells}
    collapsed |= {cid for cells in engine_troubles(report).values() if len(cells) > 1 for cid in cells}
    return [a for a in advice(report) if a.cell_id not in collapsed]
