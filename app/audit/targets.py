"""The build audit answered per target CPU (pure): what each program asks of a CPU (LSE
atomics inline or outlined, CRC32, PMULL, SVE, an x86-64 level, a segment alignment) against
what a named CPU of app/domain/cpus.toml offers, as a `Fit` with what it lacks. Nothing is
worded here: the report says it (app/report/targets.py).

- arm64: LSE atomics inline on a core without LSE (ARMv8.0: Graviton1, Raspberry Pi 4):
  does not run (SIGILL at the first atomic); outlined atomics there: slower (exclusive
  loops); no LSE in the build on a core that has it: slower under contention. SVE
  instructions on a core without SVE: does not run (unless they sit on a path chosen at
  run time: said as the program's instructions, as objdump shows them). CRC32 or PMULL on a
  core without them: slower (a program that checks the CPU first computes in software).
- Segments aligned to less than the target's usual page size: does not load there (the
  Raspberry Pi 5's 16 KiB, Grace's 64 KiB kernels); less than another page size its
  kernels come with: a caveat.
- amd64: a level above the target's: does not run; instructions above it in a few
  functions (paths chosen at run time, or code that needs them when reached): a caveat.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ecoready.domain.cpus import Cpu, Fit, Lack, ProgramFit, Target, TargetFit, cpus, level_rank
from ecoready.domain.model import BinaryAudit

KIB = 1024


def program_fits(binaries: Sequence[BinaryAudit], targets: Sequence[Target]) -> tuple[ProgramFit, ...]:
    """Per program read, its fit on each target of its arch (programs not read: left out)."""
    known = cpus()
    found = []
    for b in binaries:
        fits = tuple(
            fit
            for target in targets
            if target.cpu in known
            for fit in [fit_on(b, known[target.cpu], target.name)]
            if fit is not None
        )
        if fits:
            found.append(ProgramFit(b.program, fits))
    return tuple(found)


def fit_on(b: BinaryAudit, cpu: Cpu, name: str = "") -> TargetFit | None:
    """How `b` fits `cpu` (named `name` in the matrix); None when it was not read or is
    built for another arch."""
    if not b.path or b.note or b.machine != cpu.arch:
        return None
    lacks = tuple(_pages(b, cpu)) + tuple(_arm64(b, cpu) if cpu.arch == "arm64" else _amd64(b, cpu))
    worst = max((lack.fit for lack in lacks), key=lambda f: f.rank, default=Fit.RUNS)
    return TargetFit(target=name or cpu.id, cpu=cpu.id, fit=worst, lacks=lacks)


def _pages(b: BinaryAudit, cpu: Cpu) -> Iterator[Lack]:
    align = b.load_align
    if not align:
        return
    if cpu.usual_page > align:
        yield Lack("page-size", Fit.NOT, f"{cpu.usual_page // KIB} KiB pages")
        return
    larger = [p for p in cpu.page_sizes[1:] if p > align]
    if larger:
        yield Lack("page-other", Fit.CAVEAT, f"{max(larger) // KIB} KiB pages")


def _arm64(b: BinaryAudit, cpu: Cpu) -> Iterator[Lack]:
    has = cpu.features
    if b.lse == "inline" and "lse" not in has:
        yield Lack("lse", Fit.NOT, "LSE")
    elif b.lse == "outline" and "lse" not in has:
        yield Lack("lse-outline", Fit.SLOWER, "LSE")
    elif b.lse == "none" and b.llsc_count and "lse" in has:
        yield Lack("no-lse", Fit.SLOWER, "a build with LSE")
    if b.sve_count and "sve" not in has:
        yield Lack("sve", Fit.NOT, "SVE")
    if b.crc32_count and "crc32" not in has:
        yield Lack("crc32", Fit.SLOWER, "CRC32")
    if b.pmull_count and "pmull" not in has:
        yield Lack("pmull", Fit.SLOWER, "PMULL")


def _amd64(b: BinaryAudit, cpu: Cpu) -> Iterator[Lack]:
    offered = level_rank(cpu.level)
    if b.x86_needs and level_rank(b.x86_needs) > offered:
        yield Lack("x86-level", Fit.NOT, b.x86_needs)
    elif b.x86_uses and level_rank(b.x86_uses) > offered:
        yield Lack("x86-paths", Fit.CAVEAT, b.x86_uses)
