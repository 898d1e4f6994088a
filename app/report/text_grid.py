"""The readiness grid as plain text (pure): the headless run's closing summary and the
README's picture of it. Rows are components grouped by category, columns architectures.
Text from containers and report files is made inert: this goes to terminals."""

from __future__ import annotations

from ecoready.domain.blame import Shared, Trouble
from ecoready.domain.model import Category, CellResult, Report, Status
from ecoready.domain.text import inert, plural
from ecoready.report.coverage_words import RESTS_ON_TITLE, rests_on_lines
from ecoready.report.images_table import registry_line
from ecoready.report.order import arches_of, grid_rows
from ecoready.report.parity_words import PARITY_MARK, differs
from ecoready.report.status_words import EMULATED_MARK, GLYPH, cell_text, packaging_line, platform_text, shows_emulated
from ecoready.report.troubles import advice_to_list, infra_lines, registry_troubles, trouble
from ecoready.report.verdict import arch_verdicts
from ecoready.report.width import blocks, share, terminal_width


def hosts_by_arch(report: Report) -> dict[str, str]:
    """arch -> the host that ran its cells, when the run used several hosts and each arch
    ran on one of them (empty otherwise: one host says nothing, mixed columns are marked
    per cell)."""
    used = {c.host for c in report.cells.values() if c.host}
    if len(used) < 2:
        return {}
    by_arch: dict[str, set[str]] = {}
    for cell in report.cells.values():
        if cell.host:
            by_arch.setdefault(cell.arch, set()).add(cell.host)
    return {arch: next(iter(hosts)) for arch, hosts in by_arch.items() if len(hosts) == 1}


def column_title(report: Report, arch: str) -> str:
    """`arm64` or, when several hosts ran, `arm64 @ graviton`."""
    host = hosts_by_arch(report).get(arch)
    return f"{arch} @ {host}" if host else arch


def host_mark(report: Report, cell: CellResult) -> str:
    """` @host` after a cell whose column mixes hosts (else nothing)."""
    several = len({c.host for c in report.cells.values() if c.host}) > 1
    return f" @{cell.host}" if several and cell.host and cell.arch not in hosts_by_arch(report) else ""


GridRow = tuple[Category, str, str, dict[str, CellResult]]
# a grid column: wide enough for `✘ broken 12.3s ᵉ`, at most what a long detail needs
COLUMN_LOW, COLUMN_HIGH = 16, 30


def render_grid(report: Report, total: int | None = None) -> str:
    """The grid in `total` columns (default: the terminal's width): narrower columns first,
    then the arches in blocks one under the other, never a line wider than `total`."""
    total = total or terminal_width()
    arches = list(arches_of(report))
    rows = grid_rows(report)
    names = [len(r[1]) + 2 for r in rows] + [len(p.host) + 2 for p in report.platforms]
    name_w = min(max([len("component"), *names]) + 2, max(12, total // 3))
    width = share(total, name_w, len(arches), COLUMN_LOW, COLUMN_HIGH)
    out: list[str] = []
    for block in blocks(arches, name_w, width, total):
        if out:
            out.append("")
        out.extend(_grid_block(report, rows, list(block), name_w, width))
    return "\n".join(out)


def _name(text: str, width: int) -> str:
    text = _one_line(text)
    return (text if len(text) <= width - 1 else text[: width - 2] + "…").ljust(width)


def _grid_text(report: Report, cell: CellResult, width: int) -> str:
    """A cell in `width - 2` characters; one that a shared trouble stopped says which."""
    shared = trouble(cell)
    if shared is not None:
        text = f"{GLYPH[cell.status]} not checked: {shared[0].shared.value}"
        return text if len(text) <= width - 2 else text[: width - 3] + "…"
    mark = host_mark(report, cell)
    return _one_line(cell_text(cell, width - 2 - len(mark)) + mark)


def _grid_block(report: Report, rows: list[GridRow], arches: list[str], name_w: int, width: int) -> list[str]:
    header = "component".ljust(name_w) + "".join(_name(column_title(report, a), width) for a in arches)
    lines = [header.rstrip(), "-" * len(header.rstrip())]
    category = None
    for cat, cid, _label, cells in rows:
        if cat is not category:
            lines.append(_name(f"[{cat.value}]", name_w + width * len(arches)).rstrip())
            category = cat
        text = "".join((_grid_text(report, cells[a], width) if a in cells else "").ljust(width) for a in arches)
        lines.append((_name(f"  {cid}", name_w) + text).rstrip())
    if report.platforms:  # platform fitness: a row per host, what a container of each arch saw
        lines.append("[platform]")
        order = [h.name for h in report.hosts]
        hosts = sorted(
            dict.fromkeys(p.host for p in report.platforms),
            key=lambda h: (h not in order, order.index(h) if h in order else 0),
        )
        for host in hosts:
            seen = {p.arch: p for p in report.platforms if p.host == host}
            text = "".join(
                (_one_line(platform_text(seen[a], width - 2)) if a in seen else "").ljust(width) for a in arches
            )
            lines.append((_name(f"  {host}", name_w) + text).rstrip())
    return lines


def render_summary(report: Report) -> str:
    cells = list(report.cells.values())
    counts: dict[Status, int] = {}
    for cell in cells:
        counts[cell.status] = counts.get(cell.status, 0) + 1
    parts = [f"{n} {s.value}" for s, n in sorted(counts.items(), key=lambda kv: list(Status).index(kv[0]))]
    lines = [
        *([_one_line(report.title)] if report.title else []),
        *(_one_line(line) for line in arch_verdicts(report)),
        "",
        render_grid(report),
        "",
        f"{plural(len(cells), 'cell')}: "
        + ", ".join(parts)
        + (f"   ({EMULATED_MARK} = emulated)" if any(shows_emulated(c) for c in cells) else "")
        + (f"   ({PARITY_MARK} = differs from its reference arch)" if any(differs(c) for c in cells) else ""),
    ]
    several = len({c.host for c in cells if c.host}) > 1
    for advised in advice_to_list(report):  # what failed, and what to do about it
        cell = report.cells[advised.cell_id]
        where = f" on {cell.host}" if several and cell.host else ""
        lines.append(_one_line(f"  {GLYPH[cell.status]} {cell.id}{where}: {cell.status.value}: {advised.reason}"))
        lines.append(_one_line(f"      what to do: {advised.remedy}"))
    lines.extend(_one_line(f"  {GLYPH[Status.ERROR]} {line}") for line in infra_lines(report))
    rests = rests_on_lines(report)
    if rests:  # what each verdict rests on (report/coverage_words.py)
        lines.append(f"{RESTS_ON_TITLE.lower()}:")
        lines.extend(_one_line(f"  {line}") for line in rests)
    for cell in cells:  # driver rows: the package's verdict on its own line, under the cell's status said above
        if cell.packaging is not None:  # (never two statuses on one line: `error · packaging: ready`)
            lines.append(_one_line(f"  {cell.id}: its package {packaging_line(cell.packaging)}"))
    if several:
        for host in report.hosts:
            ran = sum(1 for c in cells if c.host == host.name)
            state = f": {host.error}" if host.error else ""
            lines.append(_one_line(f"host {host.name}: {plural(ran, 'cell')}{state}"))
    collapsed = {Trouble(Shared.REGISTRY, t.registry) for t in registry_troubles(report)}
    for note in report.notes:
        if note.about not in collapsed:  # else said above, with the way out
            lines.append(_one_line(f"note: {note.text}"))
    for status in report.registries:  # Docker Hub's pull budget: worth a glance after each run
        if status.limit is not None or status.remaining is not None:
            lines.append(_one_line(registry_line(status)))
    return "\n".join(lines)


def _one_line(text: str) -> str:
    return inert(text, 0).replace("\n", " ")
