"""The build audit per target CPU, worded (the verdicts are data: app/audit/targets.py): one
line per program, "mariadbd: fine on AWS Graviton2 and later; not on AWS Graviton1 /
Raspberry Pi 4 (needs LSE)", and a host named by its CPU's part ("Neoverse N1, as in AWS
Graviton2, Ampere Altra"). Plain text; each exporter escapes for its format."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ecoready.domain.cpus import Fit, Lack, ProgramFit, TargetFit, by_part, cpus
from ecoready.domain.model import CellResult, Report
from ecoready.report.exporter_text import cells_in_grid_order

# how each lack is said after the targets it concerns
SAID: Mapping[str, Callable[[Lack], str]] = {
    "lse": lambda lack: "needs LSE",
    "sve": lambda lack: "needs SVE",
    "x86-level": lambda lack: f"needs {lack.needs}",
    "page-size": lambda lack: f"segments too finely aligned for its {lack.needs}",
    "lse-outline": lambda lack: "atomics fall back to exclusive loops: no LSE",
    "no-lse": lambda lack: "built without LSE: exclusive loops under contention",
    "crc32": lambda lack: "no CRC32: checksums in software",
    "pmull": lambda lack: "no PMULL: checksums without folding",
    "page-other": lambda lack: f"not on kernels with {lack.needs}",
    "x86-paths": lambda lack: f"a few {lack.needs} paths",
}
FIT_WORDS: Mapping[Fit, str] = {Fit.RUNS: "fine on", Fit.CAVEAT: "runs on", Fit.SLOWER: "slower on", Fit.NOT: "not on"}


def target_name(fit: TargetFit) -> str:
    """ "AWS Graviton2" for a target CPU id; "aws:m6g.large (AWS Graviton2)" for an instance."""
    cpu = cpus().get(fit.cpu)
    name = cpu.name if cpu is not None else fit.cpu
    return name if fit.target == fit.cpu else f"{fit.target} ({name})"


def program_line(program: ProgramFit) -> str:
    """`mariadbd: fine on AWS Graviton2 and later; not on AWS Graviton1 / Raspberry Pi 4 (needs LSE)`."""
    parts = []
    for fit in Fit:
        group = [t for t in program.targets if t.fit is fit]
        if not group:
            continue
        why = sorted({SAID[lack.code](lack) for t in group for lack in t.lacks if lack.fit is fit})
        parts.append(f"{FIT_WORDS[fit]} {_names(group, program.targets)}" + (f" ({'; '.join(why)})" if why else ""))
    return f"{program.program}: {'; '.join(parts)}"


def _names(group: Sequence[TargetFit], every: Sequence[TargetFit]) -> str:
    """The targets of `group`, a series said as "X and later" (`_from_on`)."""
    said: list[str] = []
    done: set[str] = set()
    for fit in group:
        if fit.target in done:
            continue
        run = _from_on(fit, group, every)
        if run:
            said.append(f"{cpus()[run[0].cpu].name} and later")
            done.update(t.target for t in run)
        else:
            said.append(target_name(fit))
            done.add(fit.target)
    return " / ".join(said) if any(f.fit is Fit.NOT for f in group) else ", ".join(said)


def _from_on(fit: TargetFit, group: Sequence[TargetFit], every: Sequence[TargetFit]) -> list[TargetFit]:
    """The targets of `fit`'s series in `group`, oldest first, when they are every one asked
    for from the oldest of them on, more than one, up to the newest of the target file;
    else []."""
    known = cpus()
    cpu = known.get(fit.cpu)
    if cpu is None or fit.target != fit.cpu:
        return []

    def generation(t: TargetFit) -> int:
        return known[t.cpu].generation

    series = sorted(
        (t for t in every if t.target == t.cpu and t.cpu in known and known[t.cpu].series == cpu.series),
        key=generation,
    )
    ours = [t for t in series if t in group]
    newest = max(c.generation for c in known.values() if c.series == cpu.series)
    if len(ours) > 1 and series[-len(ours) :] == ours and generation(ours[-1]) == newest:
        return ours
    return []


def cell_target_lines(cell: CellResult) -> list[str]:
    """One line per program of the cell's audit, on the targets the matrix names."""
    if cell.audit is None:
        return []
    return [program_line(p) for p in cell.audit.targets]


def targets_intro(report: Report) -> str:
    """What the per-target lines are about (empty when the matrix named no target)."""
    if not report.targets:
        return ""
    named = ", ".join(t.name for t in report.targets)
    return (
        f"Target CPUs the matrix names: {named}. Each program's build, as read, on each of them "
        "(its instructions and segment alignment against the CPU's features and its kernels' page sizes)."
    )


def cpu_named(part: str) -> str:
    """ "Neoverse N1, AWS Graviton2 / Ampere Altra class"; "" when the part is not in the file."""
    found = by_part(part)
    if not found:
        return ""
    return f"{found[0].core}, {' / '.join(c.name for c in found)} class"


def plan_target_lines(report: Report) -> list[str]:
    """For the plan: `mariadb (arm64): mariadbd: fine on ...`, one line per audited program."""
    if not report.targets:
        return []
    lines: list[str] = []
    for cell in cells_in_grid_order(report):
        lines.extend(f"{cell.component} ({cell.arch}): {line}" for line in cell_target_lines(cell))
    return lines or ["no program was audited on the targets (no audit in this report)"]


def instance_blockers(report: Report, host: str, instance: str, component: str = "") -> list[str]:
    """What keeps the images off a host's instance: `mariadbd of mariadb-11.8 (needs x86-64-v4)`
    for each program of the cells on `host` (of `component` when given) that does not run
    on the instance's CPU, as the run's audit answered it for that instance."""
    if not instance:
        return []
    found = []
    for cell in cells_in_grid_order(report):
        if cell.host != host or cell.audit is None or (component and cell.component != component):
            continue
        for program in cell.audit.targets:
            for fit in program.targets:
                if fit.target == instance and fit.fit is Fit.NOT:
                    why = "; ".join(SAID[lack.code](lack) for lack in fit.lacks if lack.fit is Fit.NOT)
                    found.append(f"{program.program} of {cell.component} ({why})")
    return found
