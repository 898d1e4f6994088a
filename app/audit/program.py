"""One program's build audit: its ELF machine, segment alignment and build notes, and what
its code holds (app/audit/arm64.py, app/audit/x86.py), as a `BinaryAudit`."""

from __future__ import annotations

import bisect
import time
from collections import Counter
from dataclasses import replace

from ecoready.audit import arm64, x86
from ecoready.audit.elf import (
    GNU_PROPERTY_AARCH64_FEATURE_1_AND,
    GNU_PROPERTY_X86_ISA_1_NEEDED,
    Elf,
)
from ecoready.domain.errors import NotAProgram
from ecoready.domain.model import BinaryAudit

# options of `.GCC.command.line` (-frecord-gcc-switches) that say what the code targets
TARGET_OPTIONS = ("-march=", "-mcpu=", "-mtune=", "-moutline-atomics", "-mno-outline-atomics", "-mbranch-protection=")
MAX_BUILD = 200
OUTLINE_SYMBOL = b"__aarch64_have_lse_atomics"


class _Clock:
    """The audit's budget, looked at every so many instructions: past `deadline` (monotonic
    seconds) the work stops, so an audit its stage gave up on frees its core."""

    EVERY = 4096

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self.count = 0

    def tick(self) -> None:
        self.count += 1
        if self.count % self.EVERY == 0:
            self.check()

    def check(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise NotAProgram("not read to its end: the audit's time budget ran out")


def audit_program(program: str, path: str, data: bytes, deadline: float | None = None) -> BinaryAudit:
    """What `data` (the file found for `program` at `path`) is, without running it; the
    work stops at `deadline` (time.monotonic()), the program then said as not read."""
    clock = _Clock(deadline)
    try:
        elf = Elf(data)
        found = BinaryAudit(
            program=program,
            path=path,
            machine=elf.arch,
            size=len(data),
            load_align=elf.load_align,
            interpreter=elf.interpreter,
            build=build_notes(elf),
            build_id=elf.build_id,
        )
        if elf.arch == "arm64":
            return _arm64(elf, found, clock)
        if elf.arch == "amd64":
            return _amd64(elf, found, clock)
        return found
    except NotAProgram as exc:
        return BinaryAudit(program=program, path=path, size=len(data), note=str(exc))


def build_notes(elf: Elf) -> str:
    """The compiler (`.comment`) and target options (`.GCC.command.line`) a binary records."""
    parts = list(dict.fromkeys(s.strip() for s in elf.strings(".comment")))[:3]
    recorded = elf.strings(".GCC.command.line", 4096)
    parts.extend(dict.fromkeys(w for line in recorded for w in line.split() if w.startswith(TARGET_OPTIONS)))
    text = "; ".join(parts)
    return text if len(text) <= MAX_BUILD else text[: MAX_BUILD - 1] + "…"


def _arm64(elf: Elf, found: BinaryAudit, clock: _Clock) -> BinaryAudit:
    counts: Counter[str] = Counter()
    inline = 0
    for _address, code in elf.code():
        clock.check()
        for kind, offset in arm64.sweep(code):
            clock.tick()
            counts[kind] += 1
            if kind == "lse" and not arm64.outline_helper(code, offset):
                inline += 1
    if inline:
        lse = "inline"
    elif counts["lse"] or elf.has_symbol(OUTLINE_SYMBOL):
        lse = "outline"
    else:
        lse = "none"
    features = elf.properties.get(GNU_PROPERTY_AARCH64_FEATURE_1_AND, 0)
    return replace(
        found,
        lse=lse,
        lse_count=counts["lse"],
        llsc_count=counts["llsc"],
        crc32_count=counts["crc32"],
        pmull_count=counts["pmull"],
        sve_count=counts["sve"],
        bti=bool(features & 1),
        pac=bool(features & 2),
    )


def _amd64(elf: Elf, found: BinaryAudit, clock: _Clock) -> BinaryAudit:
    starts = elf.function_starts()
    counts: Counter[str] = Counter()
    holders: dict[str, set[int]] = {}
    for address, code in elf.code():
        clock.check()
        for kind, offset in x86.sweep(code):
            clock.tick()
            if kind == "bad":
                continue
            counts[kind] += 1
            holders.setdefault(kind, set()).add(bisect.bisect_right(starts, address + offset))
    # without a function table, every 4 KiB of code stands for a function
    total = len(starts) or max(1, sum(len(code) for _, code in elf.code()) // 4096)
    levels = x86.levels(
        counts,
        {kind: len(functions) for kind, functions in holders.items()},
        total,
        elf.properties.get(GNU_PROPERTY_X86_ISA_1_NEEDED, 0),
    )
    return replace(
        found,
        crc32_count=counts["crc32"],
        pmull_count=counts["pclmul"],
        x86_needs=levels.needs,
        x86_uses=levels.uses,
        x86_basis=levels.basis,
    )
