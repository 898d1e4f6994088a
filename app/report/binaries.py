"""The build audit as every view says it: a row per program of each audited cell, and the
findings with a glyph per severity. Plain text; each exporter escapes for its format."""

from __future__ import annotations

from collections.abc import Mapping

from ecoready.domain.model import BinaryAudit, CellResult, Report, Severity
from ecoready.report.exporter_text import cells_in_grid_order

BINARY_HEADER = ("cell", "program", "path", "arch", "atomics", "CRC32 / PMULL", "segments", "x86-64 level", "build")
SEVERITY_GLYPH: Mapping[Severity, str] = {
    Severity.FINE: "✔",
    Severity.NOTE: "•",
    Severity.HAZARD: "⚠",
    Severity.FATAL: "✘",
}
SEVERITY_LEGEND = "✔ fine · • note · ⚠ hazard (a cost, or fails elsewhere) · ✘ fatal (cannot run there)"
AUDIT_INTRO = (
    "Each cell's main programs as read from its image, never run: the arch they are built for, "
    "arm64 atomics (LSE inline, chosen at run time, or none), hardware CRC32 and PMULL, segment "
    "alignment (64 KiB-page kernels), the x86-64 level they need; the findings take the platform "
    "fitness of the cell's host into account."
)


def audited_cells(report: Report) -> list[CellResult]:
    return [c for c in cells_in_grid_order(report) if c.audit is not None]


def atomics(b: BinaryAudit) -> str:
    if b.lse == "inline":
        return f"LSE ({b.lse_count})"
    if b.lse == "outline":
        return f"LSE at run time ({b.lse_count} helper{'s' if b.lse_count != 1 else ''})"
    if b.lse == "none":
        return f"no LSE ({b.llsc_count} exclusive loops)" if b.llsc_count else "none"
    return "-"


def binary_row(cell: str, b: BinaryAudit) -> list[str]:
    """One row of BINARY_HEADER (plain text)."""
    if not b.path or b.note:
        return [cell, b.program, b.path or "not found", b.note, "", "", "", "", ""]
    crc = f"{b.crc32_count} / {b.pmull_count}" if b.crc32_count or b.pmull_count else "none"
    level = ""
    if b.x86_needs:
        level = f"needs {b.x86_needs}" + (f", uses {b.x86_uses}" if b.x86_uses != b.x86_needs else "")
    build = ", ".join(p for p in (b.build, " ".join(m for m, on in (("BTI", b.bti), ("PAC", b.pac)) if on)) if p)
    return [
        cell,
        b.program,
        b.path,
        b.machine,
        atomics(b),
        crc,
        f"{b.load_align // 1024} KiB" if b.load_align >= 1024 else str(b.load_align),
        level or "-",
        build or "-",
    ]


def binary_rows(report: Report) -> list[list[str]]:
    return [binary_row(c.id, b) for c in audited_cells(report) for b in (c.audit.binaries if c.audit else ())]


def finding_lines(cell: CellResult) -> list[str]:
    """`✔ mariadbd picks LSE atomics at run time ...`, worst first."""
    if cell.audit is None:
        return []
    order = list(SEVERITY_GLYPH)
    ranked = sorted(cell.audit.findings, key=lambda f: -order.index(f.severity))
    return [f"{SEVERITY_GLYPH[f.severity]} {f.text}" for f in ranked]


def audit_about(cell: CellResult) -> str:
    """`read in 1.9 s, crossed with local/arm64` / `from the audit cache, ...`."""
    if cell.audit is None:
        return ""
    how = "from the audit cache" if cell.audit.cached else f"read in {cell.audit.seconds:.1f} s"
    crossed = f"crossed with {cell.audit.platform}" if cell.audit.platform else "platform not known"
    return f"{how}, {crossed}"
