"""Several reports -> one (pure): e.g. a native arm64 runner's and a native amd64 runner's.

Cells are united by id. When two reports hold the same cell, a native result wins over an
emulated one, then the one that finished later; the report notes which was kept. Hosts
with the same name but different facts (both runners call theirs `local`) are each renamed
`<name>-<native arch>` so every cell still points at the host that ran it, by a name
that says which machine it is. A component's cells from different reports are compared
for parity from their fingerprints (docs/parity.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ecoready.domain.errors import ReportError
from ecoready.domain.model import (
    REPORT_SCHEMA_VERSION,
    CellResult,
    ComponentOrigin,
    HostFacts,
    Migration,
    Note,
    Report,
    TagSearch,
)
from ecoready.domain.parity import compare_prints, reference_arch


def _unique(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _one(values: Sequence[str]) -> str:
    """The value all the reports share, else "" (a matrix identity of several matrices is none)."""
    found = _unique(values)
    return found[0] if len(found) == 1 else ""


def machine(host: HostFacts) -> tuple[object, ...]:
    """What tells one machine from another: its arch, size, kernel and engine. What a run
    asked of it (the arches it served, `--arch`), which emulators it had registered then and
    whether it was lost are the run's, not the machine's: the reports of one machine that
    ran amd64 first and arm64 later (`make demo`) name one host."""
    return (host.native_arch, host.cpus, host.memory_bytes, host.kernel, host.docker, host.engine, host.instance)


def _combined(a: HostFacts, b: HostFacts) -> HostFacts:
    """One machine's facts from two of its runs: what either served and emulated."""
    serves = tuple(dict.fromkeys((*a.arches, *b.arches))) if a.serves or b.serves else ()
    return replace(
        a,
        serves=serves,
        emulated_arches=tuple(dict.fromkeys((*a.emulated_arches, *b.emulated_arches))),
        emulators={**b.emulators, **a.emulators},
        error=a.error or b.error,
    )


def _notes(notes: Sequence[Note]) -> tuple[Note, ...]:
    """Each note once, by its words, as first given."""
    first: dict[str, Note] = {}
    for note in notes:
        first.setdefault(note.text, note)
    return tuple(first.values())


def _rename_hosts(parts: Sequence[tuple[str, Report]]) -> list[tuple[str, Report]]:
    """Hosts of one name that are different machines (both runners call theirs `local`)
    are each renamed `<name>-<native arch>`, in every report, the first too: a bare `local`
    beside `local-arm64` would leave the reader guessing which machine it is. Runs of one
    machine (`machine`) keep its name."""
    facts: dict[str, list[HostFacts]] = {}
    for _label, report in parts:
        for host in report.hosts:
            known = facts.setdefault(host.name, [])
            if all(machine(host) != machine(k) for k in known):
                known.append(host)
    names: dict[str, list[str]] = {}  # a clashing name -> the new name of each of its facts
    taken = {name for name, hosts in facts.items() if len(hosts) == 1}
    for name, hosts in facts.items():
        if len(hosts) < 2:
            continue
        for host in hosts:
            new, n = f"{name}-{host.native_arch}", 2
            while new in taken:
                new, n = f"{name}-{host.native_arch}-{n}", n + 1
            taken.add(new)
            names.setdefault(name, []).append(new)
    out: list[tuple[str, Report]] = []
    for label, report in parts:
        renames = {
            h.name: names[h.name][[machine(k) for k in facts[h.name]].index(machine(h))]
            for h in report.hosts
            if h.name in names
        }
        if renames:
            report = replace(
                report,
                hosts=tuple(replace(h, name=renames.get(h.name, h.name)) for h in report.hosts),
                cells={k: replace(c, host=renames.get(c.host, c.host)) for k, c in report.cells.items()},
                platforms=tuple(replace(p, host=renames.get(p.host, p.host)) for p in report.platforms),
            )
        out.append((label, report))
    return out


def _better(a: CellResult, b: CellResult) -> CellResult:
    """Native beats emulated; then the later finished (a finished cell beats an unfinished one)."""
    if a.emulated != b.emulated:
        return b if a.emulated else a
    if a.status.finished != b.status.finished:
        return a if a.status.finished else b
    return b if (b.finished_at or "") >= (a.finished_at or "") else a


def _parity_apart(cells: dict[str, CellResult], origin: Mapping[str, str]) -> dict[str, CellResult]:
    """A component's cells that came from different reports compared from their fingerprints
    (docs/parity.md): small facets item by item, the others by digest."""
    by_component: dict[str, list[CellResult]] = {}
    for cell in cells.values():
        if cell.facts:
            by_component.setdefault(cell.component, []).append(cell)
    out = dict(cells)
    for members in by_component.values():
        reference = reference_arch(sorted(c.arch for c in members))
        ref = next(c for c in members if c.arch == reference)
        for cell in members:
            if cell is not ref and origin[cell.id] != origin[ref.id]:
                out[cell.id] = replace(cell, parity=compare_prints(reference, ref.facts, cell.facts))
    return out


def merge(parts: Sequence[tuple[str, Report]]) -> Report:
    """`parts` are (label, report), the label (a file name) used in notes."""
    if not parts:
        raise ReportError("nothing to merge")
    parts = _rename_hosts(parts)
    reports = [r for _, r in parts]
    notes: list[str] = []
    cells: dict[str, CellResult] = {}
    origin: dict[str, str] = {}
    for label, report in parts:
        for cell_id, cell in report.cells.items():
            if cell_id in cells:
                kept = _better(cells[cell_id], cell)
                loser = origin[cell_id] if kept is cell else label
                if kept is cell:
                    origin[cell_id] = label
                notes.append(f"{cell_id} was in more than one report: kept the one from {origin[cell_id]}, not {loser}")
                cells[cell_id] = kept
            else:
                cells[cell_id] = cell
                origin[cell_id] = label
    cells = _parity_apart(cells, origin)
    profiles = _unique([r.profile.value for r in reports])
    if len(profiles) > 1:
        notes.append(f"the merged reports ran different profiles: {', '.join(profiles)}")
    versions = _unique([r.tool_version for r in reports])
    if len(versions) > 1:
        notes.append(f"the merged reports come from different ecoready versions: {', '.join(versions)}")
    notes.append("merged from " + "; ".join(f"{label} (run {r.run_id[:8]})" for label, r in parts))
    hosts: dict[str, HostFacts] = {}
    for report in reports:
        for host in report.hosts:
            hosts[host.name] = _combined(hosts[host.name], host) if host.name in hosts else host
    finished = [r.finished_at for r in reports]
    run_id = hashlib.sha256(" ".join(r.run_id for r in reports).encode()).hexdigest()[:32]
    return Report(
        schema_version=REPORT_SCHEMA_VERSION,
        run_id=run_id,
        tool_version=versions[0],
        matrix=" + ".join(_unique([r.matrix for r in reports])),
        profile=reports[0].profile,
        started_at=min(r.started_at for r in reports),
        finished_at=max(f for f in finished if f) if all(finished) else None,
        interrupted=any(r.interrupted for r in reports),
        hosts=tuple(hosts.values()),
        arches=tuple(_unique([a for r in reports for a in r.arches])),
        cells=cells,
        notes=_notes([n for r in reports for n in r.notes] + [Note(n) for n in notes]),
        platforms=tuple({(p.host, p.arch): p for r in reports for p in r.platforms}.values()),
        migration=_merge_migration(reports, cells),
        title=" + ".join(_unique([r.title for r in reports if r.title])),
        matrix_content=_one([r.matrix_content for r in reports]),
        matrix_place=_one([r.matrix_place for r in reports]),
        merged_from=tuple(_unique([i for r in reports for i in (r.merged_from or (r.run_id,))])),
        targets=tuple({t.name: t for r in reports for t in r.targets}.values()),
    )


def _merge_migration(reports: Sequence[Report], cells: dict[str, CellResult]) -> Migration:
    """Each component's origin as first given; the tag searches of the cells kept."""
    origins: dict[str, ComponentOrigin] = {}
    for report in reports:
        for origin in report.migration.origins:
            origins.setdefault(origin.component, origin)
    searches: dict[tuple[str, str], TagSearch] = {}
    for report in reports:
        for search in report.migration.searches:
            kept = cells.get(f"{search.component}/{search.arch}")
            mine = report.cells.get(f"{search.component}/{search.arch}")
            if kept is not None and kept is mine:
                searches[(search.component, search.arch)] = search
    return Migration(tuple(origins.values()), tuple(searches.values()))
