"""Parity in words, once for every view (grid mark, TUI detail, Markdown, HTML, JUnit, the
verdict line, `diff` and `plan`): `arm64 differs from amd64: version 11.8.3-MariaDB vs
10.11.14-MariaDB; no `online_alter_log` plugin; 212 packages differ (`mariadb-server`
1:11.8.3 vs 1:10.11.14, …)`. The finding itself is data (`CellResult.parity`)."""

from __future__ import annotations

from collections.abc import Iterable

from ecoready.domain.model import CellResult, Report
from ecoready.domain.parity import ArchParity, Difference, Facet

PARITY_MARK = "≠"
PARITY_MEANING = "differs from the same tag on the reference arch (parity: versions, engines, plugins, packages, ...)"
NAMED = 3  # items named per facet; the rest counted

_SINGULAR = {
    Facet.ENGINES: "engine",
    Facet.PLUGINS: "plugin",
    Facet.CHARSETS: "character set",
    Facet.COLLATIONS: "collation",
    Facet.VARIABLES: "variable",
    Facet.PROGRAMS: "program",
    Facet.PACKAGES: "package",
    Facet.BUILD_IDS: "build ID",
}


def differs(cell: CellResult) -> bool:
    return cell.parity is not None and cell.parity.differs


def _item(d: Difference, arch: str) -> str:
    noun = _SINGULAR.get(d.facet, d.facet.value)
    if d.other is None:
        return f"no `{d.name}` {noun}"
    if d.reference is None:
        return f"`{d.name}` {noun} only on {arch}"
    if not d.reference and not d.other:
        return f"`{d.name}` {noun}"
    return f"`{d.name}` {d.reference or '(none)'} vs {d.other or '(none)'}"


def _facet_words(p: ArchParity, facet: Facet, arch: str) -> str:
    found = [d for d in p.differences if d.facet is facet]
    total = p.count(facet)
    if facet in (Facet.VERSION, Facet.VERSION_COMMENT) and found:
        word = "version" if facet is Facet.VERSION else "version comment"
        return f"{word} {found[0].reference or '(none)'} vs {found[0].other or '(none)'}"
    named = [_item(d, arch) for d in found[:NAMED]]
    if total <= NAMED:
        return "; ".join(named)
    plural = "packages" if facet is Facet.PACKAGES else f"{_SINGULAR.get(facet, facet.value)}s"
    return f"{total} {plural} differ ({', '.join(named)}, …)"


def differing_parts(arch: str, p: ArchParity) -> list[str]:
    """One part per facet that differs: `version 11.8.3 vs 11.8.4`, `no `rocksdb` engine`."""
    parts = [_facet_words(p, facet, arch) for facet in Facet if p.count(facet)]
    parts += [f"its {facet.value} differ (digest; what differs is not in the report)" for facet in p.unknown]
    return [part for part in parts if part]


def what_differs(arch: str, p: ArchParity) -> str:
    """`version 11.8.3 vs 11.8.4; no `rocksdb` engine` ("" when nothing differs)."""
    return "; ".join(differing_parts(arch, p))


def finding(arch: str, p: ArchParity) -> str:
    """`arm64 differs from amd64: …` ("" when it does not differ)."""
    return f"{arch} differs from {p.reference}: {what_differs(arch, p)}" if p.differs else ""


def cell_finding(cell: CellResult) -> str:
    return finding(cell.arch, cell.parity) if cell.parity is not None else ""


def compared_words(cell: CellResult) -> str:
    """`812 things compared with amd64 (version, …): the same` / `…: arm64 differs from amd64: …`."""
    p = cell.parity
    if p is None:
        return ""
    return f"{_compared_head(p)}: {cell_finding(cell) or 'the same'}"


def _compared_head(p: ArchParity) -> str:
    return f"{p.compared} things compared with {p.reference} ({', '.join(f.value for f in p.facets)})"


def compared_lines(cell: CellResult) -> list[str]:
    """`compared_words` as lines, a facet's difference on each (the TUI's detail: a long
    finding read whole, not cut at the pane's line bound)."""
    p = cell.parity
    if p is None:
        return []
    head = _compared_head(p)
    if not p.differs:
        return [f"{head}: the same"]
    return [
        f"{head}:",
        f"{cell.arch} differs from {p.reference}:",
        *(f"  {part}" for part in differing_parts(cell.arch, p)),
    ]


def compared_line(cell: CellResult) -> str:
    """`parity: ` and `compared_words` ("" for a cell not compared)."""
    return f"parity: {compared_words(cell)}" if cell.parity is not None else ""


def with_findings(cells: Iterable[CellResult]) -> list[CellResult]:
    return [c for c in cells if differs(c)]


def report_findings(report: Report) -> list[tuple[CellResult, str]]:
    """Every cell that differs from its reference arch, with its finding, in the report's order."""
    return [(c, cell_finding(c)) for c in report.cells.values() if differs(c)]


def section_lines(report: Report) -> list[str]:
    """One line per compared cell (`mariadb-10.11 on arm64: parity: 812 things compared …`),
    for the reports' parity section; empty when nothing was compared."""
    return [f"{c.component} on {c.arch}: {compared_line(c)}" for c in report.cells.values() if c.parity is not None]
