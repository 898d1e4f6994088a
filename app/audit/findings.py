"""The build audit in plain words: what each program's build means, crossed with the
platform fitness of the host and arch the cell runs on when it is known ("mariadbd uses
LSE atomics, this CPU has LSE: fine"; "needs x86-64-v3, this qemu CPU offers x86-64 only").
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ecoready.audit.x86 import LEVELS
from ecoready.domain.model import BinaryAudit, Finding, PlatformFitness, Severity

MANY_CPUS = 16  # where exclusive load/store loops under contention start to hurt
PAGE_64K = 65536
# Programs whose data are checksummed (InnoDB pages, binlog events, backups): CRC matters.
CHECKSUMMING = frozenset({"mariadbd", "mysqld", "mariadb-backup", "mariabackup", "xtrabackup"})
WHO_LACKS: dict[str, str] = {
    "x86-64-v2": "CPUs before Nehalem (2008) and qemu's default CPU lack it",
    "x86-64-v3": "CPUs before Haswell (2013), many Atom-class cores and qemu's default CPU lack it",
    "x86-64-v4": "only CPUs with AVX-512 run it (Skylake-SP, Ice Lake, Sapphire Rapids, Zen 4 and later)",
}


def mislabelled(binaries: Sequence[BinaryAudit], arch: str) -> list[BinaryAudit]:
    """The programs built for another arch than the image says."""
    return [b for b in binaries if b.path and b.machine and not b.note and b.machine != arch]


def findings(binaries: Sequence[BinaryAudit], arch: str, platform: PlatformFitness | None) -> tuple[Finding, ...]:
    """Every finding about the programs of an image of `arch`; `platform`: the fitness of
    the host and arch the cell runs on (None while it is not known)."""
    known = platform if platform is not None and platform.machine else None
    return tuple(f for b in binaries for f in _about(b, arch, known))


def summary(binaries: Sequence[BinaryAudit]) -> str:
    """One line for the audit stage's detail: each program, briefly."""
    return "; ".join(f"{b.program}: {_brief(b)}" for b in binaries) or "no program to audit"


def _brief(b: BinaryAudit) -> str:
    if not b.path:
        return "not found"
    if b.note:
        return b.note
    parts = [b.machine]
    if b.machine == "arm64":
        parts.append({"inline": "LSE", "outline": "LSE at run time", "none": "no LSE"}.get(b.lse, b.lse))
        parts.extend(name for name, count in (("CRC32", b.crc32_count), ("PMULL", b.pmull_count)) if count)
        parts.append(f"{b.load_align // 1024} KiB segments")
    elif b.machine == "amd64":
        parts.append(f"needs {b.x86_needs}" + (f", uses {b.x86_uses}" if b.x86_uses != b.x86_needs else ""))
    return ", ".join(p for p in parts if p)


def _has(platform: PlatformFitness | None, feature: str) -> bool | None:
    if platform is None:
        return None
    if feature in platform.features:
        return True
    return False if feature in platform.missing else None


def _cpu(platform: PlatformFitness | None) -> str:
    return "this qemu CPU" if platform is not None and platform.emulated else "this CPU"


def _about(b: BinaryAudit, arch: str, platform: PlatformFitness | None) -> Iterator[Finding]:
    name = b.program
    if not b.path:
        yield Finding(name, "not-found", Severity.NOTE, f"{name}: not in the image (looked along its PATH)")
        return
    if b.note:
        yield Finding(name, "unreadable", Severity.NOTE, f"{name} ({b.path}): {b.note}")
        return
    if b.machine != arch:
        text = f"mislabelled binary: {b.path} is built for {b.machine}, the image says {arch}"
        yield Finding(name, "mislabelled", Severity.FATAL, text)
        return
    if arch == "arm64":
        yield _atomics(b, platform)
        if name in CHECKSUMMING:
            yield _crc_arm64(b, platform)
        yield _alignment(b, platform)
        if b.bti or b.pac:
            marks = " and ".join(m for m, on in (("BTI", b.bti), ("PAC", b.pac)) if on)
            yield Finding(name, "branch-protection", Severity.FINE, f"{name} is built with branch protection ({marks})")
    elif arch == "amd64":
        yield _x86_level(b, platform)
        if name in CHECKSUMMING:
            yield _crc_amd64(b, platform)


def _atomics(b: BinaryAudit, p: PlatformFitness | None) -> Finding:
    name, lse, cpu = b.program, _has(p, "lse"), _cpu(p)
    if b.lse == "inline":
        if lse is False:
            text = f"{name} uses LSE atomics inline, {cpu} lacks them (an ARMv8.0 core): it dies of SIGILL"
            return Finding(name, "lse-inline", Severity.FATAL, text)
        if lse:
            return Finding(name, "lse-inline", Severity.FINE, f"{name} uses LSE atomics, {cpu} has LSE: fine")
        text = f"{name} uses LSE atomics inline: it needs an ARMv8.1 or later CPU (Neoverse N1, Graviton2 and newer)"
        return Finding(name, "lse-inline", Severity.NOTE, text)
    if b.lse == "outline":
        # each outline helper holds its LSE instruction and its exclusive loop: loops beyond
        # those are the program's own, inline (HAProxy's 128-bit LDXP/STXP), never LSE
        own = b.llsc_count - b.lse_count
        also = (
            f"; it also holds {own} exclusive load/store loop{'s' if own != 1 else ''} of its own "
            "(inline, such as 128-bit LDXP/STXP), which run as loops on every CPU"
            if own > 0
            else ""
        )
        if lse is False:
            text = (
                f"{name} picks LSE atomics at run time, {cpu} lacks them: it falls back to exclusive "
                f"load/store loops, slower under contention{also}"
            )
            return Finding(name, "lse-outline", Severity.HAZARD, text)
        where = f"{cpu} has LSE: it uses them" if lse else "fast on ARMv8.1+ CPUs, still runs on ARMv8.0"
        text = f"{name} picks LSE atomics at run time (outline atomics); {where}{also}"
        return Finding(name, "lse-outline", Severity.FINE, text)
    if not b.llsc_count:
        return Finding(name, "no-atomics", Severity.NOTE, f"{name} has no atomic read-modify-write of its own")
    fix = "a build with -moutline-atomics (GCC 10+ default) or -march=armv8.1-a would use LSE"
    if lse is False:
        text = (
            f"{name} is built without LSE atomics, as {cpu} (no LSE) needs: fine here; "
            "many-core ARMv8.1+ hosts pay for it"
        )
        return Finding(name, "no-lse", Severity.NOTE, text)
    if lse and p is not None and not p.emulated and p.cpus >= MANY_CPUS:
        text = f"{name} is built without LSE atomics on a {p.cpus}-core host: expect lock contention; {fix}"
        return Finding(name, "no-lse", Severity.HAZARD, text)
    text = f"{name} is built without LSE atomics: on many-core arm64 hosts expect lock contention; {fix}"
    return Finding(name, "no-lse", Severity.HAZARD, text)


def _crc_arm64(b: BinaryAudit, p: PlatformFitness | None) -> Finding:
    name, cpu = b.program, _cpu(p)
    if not b.crc32_count:
        text = f"{name} has no CRC32 instructions: its checksums (InnoDB pages, binlog) run in software"
        return Finding(name, "no-crc32", Severity.HAZARD, text)
    held = "CRC32 and PMULL" if b.pmull_count else "CRC32 (no PMULL: no parallel folding)"
    lacking = [f for f in ("crc32", "pmull") if _has(p, f) is False and (f == "crc32" or b.pmull_count)]
    if lacking:
        text = (
            f"{name} has {held} instructions, {cpu} lacks {' and '.join(lacking)}: fine only if it checks the CPU first"
        )
        return Finding(name, "crc32", Severity.NOTE, text)
    where = f"; {cpu} has them: fine" if _has(p, "crc32") else ""
    return Finding(name, "crc32", Severity.FINE, f"{name} computes CRC-32C in hardware ({held}){where}")


def _alignment(b: BinaryAudit, p: PlatformFitness | None) -> Finding:
    name, align = b.program, b.load_align
    if align >= PAGE_64K:
        text = f"{name}'s segments are {align // 1024} KiB-aligned: it loads on 4, 16 and 64 KiB-page kernels"
        return Finding(name, "page-align", Severity.FINE, text)
    if p is not None and p.page_size and p.page_size > align:
        text = (
            f"{name}'s segments are {align // 1024} KiB-aligned, this kernel has {p.page_size // 1024} KiB "
            "pages: it cannot load"
        )
        return Finding(name, "page-4k", Severity.FATAL, text)
    text = (
        f"{name}'s segments are {align // 1024} KiB-aligned: it will not load on 64 KiB-page kernels "
        "(RHEL and Oracle Linux 64k kernels, some Ampere and Graviton images)"
    )
    return Finding(name, "page-4k", Severity.HAZARD, text)


def _x86_level(b: BinaryAudit, p: PlatformFitness | None) -> Finding:
    name, needs, cpu = b.program, b.x86_needs, _cpu(p)
    # instructions above the level needed sit in a few functions: a path chosen at run time
    # (MariaDB's CRC-32C) or code that runs them unconditionally when reached (HAProxy's
    # cmpxchg16b in ha_random64): the instructions alone do not tell which
    paths = (
        f" (it has {b.x86_uses} instructions in a few functions: paths chosen at run time, "
        f"or code that needs {b.x86_uses} when it is reached)"
        if _rank(b.x86_uses) > _rank(needs)
        else ""
    )
    offered = p.x86_level if p is not None else ""
    if offered and _rank(offered) < _rank(needs):
        fix = ": set QEMU_CPU=max or use a newer qemu" if p is not None and p.emulated else ""
        text = f"{name} needs {needs}, {cpu} offers {offered} only: it stops at its first such instruction{fix}"
        return Finding(name, "x86-level", Severity.FATAL, text)
    if offered:
        return Finding(name, "x86-level", Severity.FINE, f"{name} needs {needs}, {cpu} offers {offered}: fine{paths}")
    if _rank(needs) == 0:
        return Finding(name, "x86-level", Severity.FINE, f"{name} needs only the x86-64 baseline{paths}")
    return Finding(name, "x86-level", Severity.NOTE, f"{name} needs {needs}: {WHO_LACKS[needs]}{paths}")


def _crc_amd64(b: BinaryAudit, p: PlatformFitness | None) -> Finding:
    name = b.program
    if not b.crc32_count:
        text = f"{name} has no SSE4.2 crc32 instructions: its checksums (InnoDB pages, binlog) run in software"
        return Finding(name, "no-crc32", Severity.HAZARD, text)
    if _has(p, "sse4.2") is False:
        text = f"{name} has SSE4.2 crc32 instructions, {_cpu(p)} lacks SSE4.2: fine only if it checks the CPU first"
        return Finding(name, "crc32", Severity.NOTE, text)
    folding = " and PCLMULQDQ" if b.pmull_count else ""
    return Finding(name, "crc32", Severity.FINE, f"{name} computes CRC-32C in hardware (SSE4.2 crc32{folding})")


def _rank(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else 0
