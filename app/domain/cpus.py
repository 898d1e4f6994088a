"""Target CPUs (`cpus.toml`, shipped with ecoready): the machines a build audit is answered
for, each with its architecture level, the features the audit asks about, the page sizes
of its usual kernels, the MIDR (arm64) or vendor/family/model (amd64) it is known by, and
the pages these facts were read from. Pure data: app/audit/targets.py derives "runs / does
not run" from it, never stores it as words.
"""

from __future__ import annotations

import difflib
import enum
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

ARM_FEATURES = frozenset({"lse", "crc32", "pmull", "sve", "sve2"})
X86_FEATURES = frozenset({"sse4.2", "pclmul", "avx2", "avx512"})
ARM_LEVELS = ("armv8.0", "armv8.1", "armv8.2", "armv8.3", "armv8.4", "armv8.5", "armv8.6", "armv8.7", "armv9.0")
X86_LEVELS = ("x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4")


@dataclass(frozen=True)
class Source:
    url: str
    date: str  # YYYY-MM-DD


@dataclass(frozen=True)
class X86Id:
    """A vendor, family and range of models as /proc/cpuinfo gives them."""

    vendor: str  # "GenuineIntel", "AuthenticAMD"
    family: int
    first: int
    last: int

    def matches(self, vendor: str, family: int, model: int) -> bool:
        return vendor == self.vendor and family == self.family and self.first <= model <= self.last


@dataclass(frozen=True)
class Cpu:
    id: str  # "graviton2"
    name: str  # "AWS Graviton2"
    core: str  # "Neoverse N1"
    arch: str  # "arm64" | "amd64"
    level: str  # "armv8.2" | "x86-64-v3"
    features: frozenset[str]
    page_sizes: tuple[int, ...]  # the usual kernel's first
    midr: tuple[str, ...]  # "0x41:0xd0c"
    x86: tuple[X86Id, ...]
    series: str
    generation: int
    source: Source  # level and features
    id_source: Source  # MIDR or family/model
    pages_source: Source

    @property
    def usual_page(self) -> int:
        return self.page_sizes[0]


class CpuFileError(ValueError):
    """The target file is not as this module expects (a packaging or editing mistake)."""


@cache
def cpus() -> dict[str, Cpu]:
    """The target CPUs by id, in the file's order."""
    text = resources.files("ecoready.domain").joinpath("cpus.toml").read_text(encoding="utf-8")
    return parse_cpus(tomllib.loads(text))


def parse_cpus(data: dict[str, Any]) -> dict[str, Cpu]:
    """The [[cpus]] of a parsed target file; each `*source` names a [sources] entry."""
    sources = {key: Source(str(v["url"]), str(v["date"])) for key, v in data.get("sources", {}).items()}
    found: dict[str, Cpu] = {}
    for item in data.get("cpus", []):
        cpu = _cpu(item, sources)
        if cpu.id in found:
            raise CpuFileError(f"target {cpu.id!r} is given twice")
        found[cpu.id] = cpu
    return found


def _cpu(item: dict[str, Any], sources: dict[str, Source]) -> Cpu:
    ident = str(item["id"])

    def source(key: str) -> Source:
        name = str(item[key])
        if name not in sources:
            raise CpuFileError(f"target {ident!r}: {key} {name!r} is not a [sources] entry")
        return sources[name]

    arch = str(item["arch"])
    features = frozenset(str(f) for f in item.get("features", []))
    known, levels = (ARM_FEATURES, ARM_LEVELS) if arch == "arm64" else (X86_FEATURES, X86_LEVELS)
    level = str(item["level"])
    if features - known or level not in levels:
        raise CpuFileError(f"target {ident!r}: unknown feature or level ({sorted(features - known)}, {level})")
    pages = tuple(int(p) for p in item["page_sizes"])
    if not pages:
        raise CpuFileError(f"target {ident!r}: no page size")
    return Cpu(
        id=ident,
        name=str(item["name"]),
        core=str(item["core"]),
        arch=arch,
        level=level,
        features=features,
        page_sizes=pages,
        midr=tuple(str(m).lower() for m in item.get("midr", [])),
        x86=tuple(_x86_id(str(x)) for x in item.get("x86", [])),
        series=str(item["series"]),
        generation=int(item["generation"]),
        source=source("source"),
        id_source=source("id_source"),
        pages_source=source("pages_source"),
    )


def _x86_id(text: str) -> X86Id:
    """ "GenuineIntel:6:0x55" or "AuthenticAMD:0x19:0x10-0x1f"."""
    vendor, family, models = text.split(":")
    first, _, last = models.partition("-")
    return X86Id(vendor, int(family, 0), int(first, 0), int(last or first, 0))


def level_rank(level: str) -> int:
    """The order of an architecture level within its arch (-1: unknown)."""
    for levels in (ARM_LEVELS, X86_LEVELS):
        if level in levels:
            return levels.index(level)
    return -1


def by_midr(implementer: str, part: str) -> list[Cpu]:
    """The targets built of the core whose MIDR says `implementer` and `part` ("0x41", "0xd0c")."""
    if not implementer or not part:
        return []
    key = f"{_hex(implementer, 2)}:{_hex(part, 3)}"
    return [c for c in cpus().values() if key in c.midr]


def by_x86(vendor: str, family: int | None, model: int | None) -> list[Cpu]:
    """The targets whose vendor/family/model range holds this CPU's."""
    if family is None or model is None:
        return []
    return [c for c in cpus().values() if any(x.matches(vendor, family, model) for x in c.x86)]


def by_part(part: str) -> list[Cpu]:
    """The targets of a part as PlatformFitness.cpu_part gives it: "0x41:0xd0c" (MIDR) or
    "GenuineIntel:0x6:0x55" (x86 vendor, family and model)."""
    pieces = part.split(":")
    if len(pieces) == 2:
        return by_midr(*pieces)
    if len(pieces) == 3:
        try:
            return by_x86(pieces[0], int(pieces[1], 0), int(pieces[2], 0))
        except ValueError:
            return []
    return []


def _hex(text: str, width: int) -> str:
    try:
        return f"0x{int(text, 16):0{width}x}"
    except ValueError:
        return text.lower()


def nearest(name: str, names: list[str], n: int = 3) -> list[str]:
    """The names closest to `name` (for `did you mean`)."""
    return difflib.get_close_matches(name, names, n=n, cutoff=0.5)


class Fit(str, enum.Enum):
    """How a program fits a target CPU, best first."""

    RUNS = "runs"
    CAVEAT = "caveat"  # runs on the target's usual setup; not on some of its kernels, or a path may not
    SLOWER = "slower"  # runs, without an instruction it could use (exclusive loops for LSE, software CRC)
    NOT = "not"  # does not run: an instruction the CPU lacks, or segments its usual kernel cannot map

    @property
    def rank(self) -> int:
        return list(Fit).index(self)


@dataclass(frozen=True)
class Lack:
    """One thing a program asks of a CPU that this one lacks."""

    # stable: "lse", "lse-outline", "no-lse", "crc32", "pmull", "sve", "x86-level", "x86-paths",
    # "page-size", "page-other" (app/audit/targets.py)
    code: str
    fit: Fit
    needs: str  # what is lacking, short: "LSE", "x86-64-v3", "16 KiB pages", "SVE"


@dataclass(frozen=True)
class TargetFit:
    """A program on one requested target."""

    target: str  # as the matrix names it: a target id ("rpi4") or an instance ("aws:m6g.large")
    cpu: str  # the target CPU's id
    fit: Fit
    lacks: tuple[Lack, ...] = ()


@dataclass(frozen=True)
class ProgramFit:
    """One audited program on each requested target of its arch."""

    program: str
    targets: tuple[TargetFit, ...] = ()


@dataclass(frozen=True)
class Target:
    """A target a matrix asks about: its name there and the CPU it stands for."""

    name: str  # "aws:m6g.large" or "graviton2"
    cpu: str  # "graviton2"
