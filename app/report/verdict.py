"""The answer at a glance (pure), a line per architecture, worded once for every view (TUI,
headless summary, Markdown, HTML, JUnit): `arch_verdicts` (which components are ready, and
the others by group, with a few words of why) and `glance` (the exit line: counts only).
Both sort a cell into one `GROUPS` entry by its status, so every status that is not ready
is named, once, in both.

What failed and what to do about it, per cell, is `reasons.py`; what many cells failed by
at once (a registry, a backend, an engine), said once, is `troubles.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ecoready.domain.model import CellResult, Report, Status
from ecoready.domain.text import plural
from ecoready.report.order import arches_of, grid_rows
from ecoready.report.parity_words import differs, what_differs
from ecoready.report.reasons import Advice, advice


@dataclass(frozen=True)
class Group:
    """Cells of one arch not ready, said together: in a verdict line (`blocked by`) and in
    the exit line (`blocked`)."""

    verdict: str
    glance: str
    statuses: tuple[Status, ...]


# Every status but `ready` in exactly one group (tests/unit/test_verdict.py says so).
GROUPS = (
    Group("blocked by", "blocked", (Status.MISSING, Status.BROKEN)),
    Group("partial:", "partial", (Status.PARTIAL,)),
    Group("timed out:", "timed out", (Status.TIMEOUT,)),
    Group("locked:", "locked", (Status.LOCKED,)),  # what to provide: a login, a licence key
    Group("not checked:", "not checked", (Status.ERROR, Status.SKIPPED)),
    Group("to go", "to go", (Status.PENDING, Status.RUNNING)),  # a run under way (or stopped)
)
UNDER_WAY = GROUPS[-1]


def per_arch(report: Report) -> list[tuple[str, list[CellResult], list[tuple[Group, list[CellResult]]]]]:
    """(arch, its cells, each group with its cells in grid order) for every arch with cells;
    groups without cells left out."""
    order = {component: i for i, (_c, component, _n, _cells) in enumerate(grid_rows(report))}
    out = []
    for arch in arches_of(report):
        cells = sorted(
            (c for c in report.cells.values() if c.arch == arch), key=lambda c: order.get(c.component, len(order))
        )
        if cells:
            groups = [(g, [c for c in cells if c.status in g.statuses]) for g in GROUPS]
            out.append((arch, cells, [(g, members) for g, members in groups if members]))
    return out


def how_run(report: Report, arch: str, short: bool = False) -> str:
    """`native on graviton`, `emulated with qemu-aarch64 on local`, `native on a, emulated
    with … on b`; `short`: `native`, `emulated`, `native and emulated` (where the header
    already names the hosts and emulators)."""
    cells = [c for c in report.cells.values() if c.arch == arch and c.host]
    native = sorted({c.host for c in cells if not c.emulated})
    emulated = sorted({c.host for c in cells if c.emulated})
    if short:
        return " and ".join(w for w, hosts in (("native", native), ("emulated", emulated)) if hosts) or "no host"
    parts = []
    if native:
        parts.append(f"native on {', '.join(native)}")
    if emulated:
        emulator = next((h.emulators.get(arch, "") for h in report.hosts if h.name in emulated), "")
        which = emulator.split(" version ")[0] if emulator else "qemu"
        parts.append(f"emulated with {which} on {', '.join(emulated)}")
    return ", ".join(parts) or "no host"


def arch_verdicts(report: Report, short: bool = False) -> list[str]:
    """One line per arch: `arm64 (emulated (qemu-aarch64) on local): 14 of 16 components
    ready; blocked by proxysql (no arm64 image); partial: percona-toolkit (pt-summary failed)`."""
    by_cell = {a.cell_id: a for a in advice(report)}
    lines = []
    for arch, cells, groups in per_arch(report):
        ready = sum(1 for c in cells if c.status is Status.READY)
        text = f"{arch} ({how_run(report, arch, short)}): {ready} of {plural(len(cells), 'component')} ready"
        under_way = dict(groups).get(UNDER_WAY, [])
        if under_way:
            text += f" so far, {len(under_way)} to go"
        for group, members in groups:  # the cells under way have no advice: not named
            named = [by_cell[c.id] for c in members if c.id in by_cell]
            if named:
                text += f"; {group.verdict} {_named(named)}"
        lines.append(text)
        lines.extend(parity_verdict(arch, cells))
    return lines


def parity_verdict(arch: str, cells: list[CellResult]) -> list[str]:
    """The arch's own parity line when some of its cells differ from their reference arch:
    `arm64 parity: 1 component differs from amd64: gap-parity (version … vs …; …)`."""
    found = [c for c in cells if differs(c)]
    if not found:
        return []
    references = sorted({c.parity.reference for c in found if c.parity is not None})
    named = "; ".join(f"{c.component} ({what_differs(c.arch, c.parity)})" for c in found[:MAX_NAMED] if c.parity)
    more = f"; and {len(found) - MAX_NAMED} more" if len(found) > MAX_NAMED else ""
    word = "differs" if len(found) == 1 else "differ"
    return [f"{arch} parity: {plural(len(found), 'component')} {word} from {', '.join(references)}: {named}{more}"]


MAX_NAMED = 6  # components named per group in a verdict line; the rest are counted


def _named(named: list[Advice]) -> str:
    """`a, b (no arm64 image), c (does not start)`: components sharing a reason, together."""
    by_short: dict[str, list[str]] = {}
    for item in named[:MAX_NAMED]:
        by_short.setdefault(item.short, []).append(item.component)
    joined = ", ".join(f"{', '.join(components)} ({short})" for short, components in by_short.items())
    return joined + (f" and {len(named) - MAX_NAMED} more" if len(named) > MAX_NAMED else "")


def glance(report: Report) -> str:
    """`amd64 5 of 6 ready · arm64 1 of 6 ready, 3 blocked, 1 partial`: the exit line's words."""
    parts = []
    for arch, cells, groups in per_arch(report):
        ready = sum(1 for c in cells if c.status is Status.READY)
        counts = "".join(f", {len(members)} {group.glance}" for group, members in groups)
        parts.append(f"{arch} {ready} of {len(cells)} ready{counts}")
    return " · ".join(parts)
