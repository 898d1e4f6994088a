"""x86-64 code: which instructions beyond the baseline it holds, by a linear sweep.

A length decoder written as one bytes regex (built below from the opcode maps), so the
sweep runs inside `re` rather than a Python loop: a match is either a run of instructions
of no interest (up to `RUN` of them), one instruction of a class we count, or one byte
that decodes as nothing (skipped: the sweep resynchronises within a few instructions).
GCC and Clang keep jump tables out of .text on x86-64, so a linear sweep of it meets
code only (what `objdump -d` does too).

The classes (x86-64 psABI levels; the 2-byte VEX and the EVEX prefixes are unambiguous
in 64-bit mode, where LDS, LES and BOUND do not exist):
  v2     POPCNT, SSE3, SSSE3, SSE4.1, SSE4.2 (string compares, PCMPGTQ), CMPXCHG16B
  crc32  SSE4.2's CRC32 (hardware CRC-32C; a v2 instruction, counted on its own)
  pclmul PCLMULQDQ, legacy encoding (CRC folding, GHASH; in no level)
  v3     every VEX instruction (AVX, AVX2, FMA, F16C, BMI1, BMI2), LZCNT, MOVBE
  v4     every EVEX instruction (AVX-512)
TZCNT is not counted: it runs as BSF on older CPUs (compilers emit it as `rep bsf`).

What level a program *needs* is not what its instructions reach: programs pick faster
paths at run time (MariaDB's CRC-32C has SSE4.2, PCLMUL, AVX2 and AVX-512 versions in a
baseline build). A build for a level spreads that level's instructions over its code,
while paths chosen at run time sit in a few functions; so a level counts as needed when
its instructions are in at least `SPREAD` of the functions (and in `MIN_FUNCTIONS`).
A level an ELF note of its objects states (GNU_PROPERTY_X86_ISA_1_NEEDED) counts too when
it is above the baseline: the baseline note comes from the C library's start files (glibc's
crt1.o), which every program links, whatever `-march` its own code was built for.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

RUN = 4096  # instructions of no interest consumed by one match: bounds the time `re` holds the GIL

CLASSES = ("v2", "crc32", "pclmul", "v3", "v4")
LEVELS = ("x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4")
LEVEL_OF_CLASS: Mapping[str, int] = {"v2": 1, "crc32": 1, "v3": 2, "v4": 3}  # index into LEVELS
SPREAD = 0.01
MIN_FUNCTIONS = 2


def _cls(values: Iterable[int]) -> str:
    """A regex character class of byte values, as ranges."""
    ordered = sorted(set(values))
    if not ordered:
        raise ValueError("empty byte class")
    parts: list[str] = []
    start = prev = ordered[0]
    for value in [*ordered[1:], -2]:
        if value == prev + 1:
            prev = value
            continue
        parts.append(f"\\x{start:02x}" if start == prev else f"\\x{start:02x}-\\x{prev:02x}")
        start = prev = value
    return "[" + "".join(parts) + "]"


def _any(count: int) -> str:
    return "" if count == 0 else "." if count == 1 else f".{{{count}}}"


def _modrm(regs: Iterable[int] = range(8), *, memory_only: bool = False) -> str:
    """A ModRM byte with its SIB and displacement (the reg field limited to `regs`)."""
    allowed = set(regs)

    def where(test: object) -> list[int]:
        return [b for b in range(256) if (b >> 3) & 7 in allowed and test(b >> 6, b & 7)]  # type: ignore[operator]

    sib_disp32 = _cls(b for b in range(256) if b & 7 == 5)
    sib_plain = _cls(b for b in range(256) if b & 7 != 5)
    branches = [
        _cls(where(lambda mod, rm: mod == 0 and rm not in (4, 5))),
        _cls(where(lambda mod, rm: mod == 0 and rm == 5)) + _any(4),  # RIP-relative
        _cls(where(lambda mod, rm: mod == 0 and rm == 4)) + f"(?:{sib_disp32}{_any(4)}|{sib_plain})",
        _cls(where(lambda mod, rm: mod == 1 and rm != 4)) + _any(1),
        _cls(where(lambda mod, rm: mod == 1 and rm == 4)) + _any(2),
        _cls(where(lambda mod, rm: mod == 2 and rm != 4)) + _any(4),
        _cls(where(lambda mod, rm: mod == 2 and rm == 4)) + _any(5),
    ]
    if not memory_only:
        branches.insert(0, _cls(where(lambda mod, rm: mod == 3)))
    return "(?:" + "|".join(branches) + ")"


MODRM = _modrm()

# What follows each one-byte opcode (64-bit mode): "" nothing, M ModRM, b/w/z an immediate
# of 1/2/4 bytes (z: 2 under a 66 prefix), v MOV's immediate, d rel32, o a 64-bit offset.
ONE_BYTE: dict[int, str] = {}
for _base in range(0x00, 0x40, 0x08):
    ONE_BYTE.update({_base: "M", _base + 1: "M", _base + 2: "M", _base + 3: "M", _base + 4: "b", _base + 5: "z"})
for _op in (0x06, 0x07, 0x0E, 0x16, 0x17, 0x1E, 0x1F, 0x27, 0x2F, 0x37, 0x3F):
    ONE_BYTE.pop(_op, None)  # invalid in 64-bit mode (0x0F is the escape, handled apart)
ONE_BYTE.pop(0x0F, None)
ONE_BYTE.update(dict.fromkeys(range(0x50, 0x60), ""))
ONE_BYTE.update({0x63: "M", 0x68: "z", 0x69: "Mz", 0x6A: "b", 0x6B: "Mb"})
ONE_BYTE.update(dict.fromkeys(range(0x6C, 0x70), ""))
ONE_BYTE.update(dict.fromkeys(range(0x70, 0x80), "b"))
ONE_BYTE.update({0x80: "Mb", 0x81: "Mz", 0x83: "Mb"})
ONE_BYTE.update(dict.fromkeys(range(0x84, 0x90), "M"))
ONE_BYTE.update(dict.fromkeys([*range(0x90, 0x9A), *range(0x9B, 0xA0)], ""))
ONE_BYTE.update(dict.fromkeys(range(0xA0, 0xA4), "o"))
ONE_BYTE.update(dict.fromkeys([0xA4, 0xA5, 0xA6, 0xA7, *range(0xAA, 0xB0)], ""))
ONE_BYTE.update({0xA8: "b", 0xA9: "z"})
ONE_BYTE.update(dict.fromkeys(range(0xB0, 0xB8), "b"))
ONE_BYTE.update(dict.fromkeys(range(0xB8, 0xC0), "v"))
ONE_BYTE.update({0xC0: "Mb", 0xC1: "Mb", 0xC2: "w", 0xC3: "", 0xC6: "Mb", 0xC7: "Mz", 0xC8: "wb", 0xC9: ""})
ONE_BYTE.update({0xCA: "w", 0xCB: "", 0xCC: "", 0xCD: "b", 0xCF: ""})
ONE_BYTE.update(dict.fromkeys([0xD0, 0xD1, 0xD2, 0xD3, *range(0xD8, 0xE0)], "M"))
ONE_BYTE.update({0xD7: ""})
ONE_BYTE.update(dict.fromkeys(range(0xE0, 0xE8), "b"))
ONE_BYTE.update({0xE8: "d", 0xE9: "d", 0xEB: "b"})
ONE_BYTE.update(dict.fromkeys([0xEC, 0xED, 0xEE, 0xEF, 0xF1, 0xF4, 0xF5, *range(0xF8, 0xFE)], ""))
ONE_BYTE.update({0xF6: "F6", 0xF7: "F7", 0xFE: "M", 0xFF: "M"})

# The 0F map the same way (0F 38 and 0F 3A, the three-byte maps, are handled apart).
TWO_BYTE: dict[int, str] = {}
TWO_BYTE.update(dict.fromkeys([0x00, 0x01, 0x02, 0x03, 0x0D], "M"))
TWO_BYTE.update(dict.fromkeys([0x05, 0x06, 0x07, 0x08, 0x09, 0x0B, 0x0E], ""))
TWO_BYTE.update({0x0F: "Mb"})  # 3DNow!: its opcode comes after the operands
TWO_BYTE.update(dict.fromkeys([*range(0x10, 0x24), *range(0x28, 0x30)], "M"))
TWO_BYTE.update(dict.fromkeys([*range(0x30, 0x36), 0x37], ""))
TWO_BYTE.update(dict.fromkeys([*range(0x40, 0x70), 0x74, 0x75, 0x76, 0x78, 0x79, *range(0x7C, 0x80)], "M"))
TWO_BYTE.update(dict.fromkeys(range(0x70, 0x74), "Mb"))
TWO_BYTE.update({0x77: ""})
TWO_BYTE.update(dict.fromkeys(range(0x80, 0x90), "d"))
TWO_BYTE.update(dict.fromkeys(range(0x90, 0xA0), "M"))
TWO_BYTE.update(dict.fromkeys([0xA0, 0xA1, 0xA2, 0xA8, 0xA9, 0xAA], ""))
TWO_BYTE.update(dict.fromkeys([0xA3, 0xA5, 0xAB, 0xAD, 0xAE, 0xAF, *range(0xB0, 0xBA), *range(0xBB, 0xC0)], "M"))
TWO_BYTE.update(dict.fromkeys([0xA4, 0xAC, 0xBA, 0xC2, 0xC4, 0xC5, 0xC6], "Mb"))
TWO_BYTE.update(dict.fromkeys([0xC0, 0xC1, 0xC3, 0xC7, *range(0xD0, 0x100)], "M"))
TWO_BYTE.update(dict.fromkeys(range(0xC8, 0xD0), ""))

PREFIX = r"[\x26\x2e\x36\x3e\x64\x65\x66\x67\xf0\xf2\xf3]"
PREFIX_NO_66 = r"[\x26\x2e\x36\x3e\x64\x65\x67\xf0\xf2\xf3]"
REX = r"[\x40-\x4f]?"
REX_W = r"[\x48-\x4f]"
VEX_PREFIX = r"[\x26\x2e\x36\x3e\x64\x65\x67]*"  # 66/F2/F3/REX before VEX or EVEX are #UD


def _tails(table: Mapping[int, str], z: int) -> str:
    """Every opcode of `table` with what follows it; `z`: the size of a z immediate."""
    sizes = {"": "", "M": MODRM, "Mb": MODRM + ".", "Mz": MODRM + _any(z), "b": ".", "w": "..", "z": _any(z)}
    sizes.update({"v": _any(z), "wb": "...", "d": ".{4}", "o": ".{8}"})
    groups: dict[str, list[int]] = {}
    for opcode, tail in table.items():
        groups.setdefault(tail, []).append(opcode)
    branches = []
    for tail, opcodes in groups.items():
        if tail == "F6":
            branches.append(rf"\xf6(?:{_modrm((0, 1))}.|{_modrm(range(2, 8))})")
        elif tail == "F7":
            branches.append(rf"\xf7(?:{_modrm((0, 1))}{_any(z)}|{_modrm(range(2, 8))})")
        else:
            branches.append(_cls(opcodes) + sizes[tail])
    return "(?:" + "|".join(branches) + ")"


def _legacy(z: int, *, escaped: bool) -> str:
    """Legacy-encoded instructions after their prefixes: one-byte opcodes, or (`escaped`)
    those of the 0F maps."""
    if not escaped:
        return rf"(?:{REX_W}[\xb8-\xbf].{{8}}|{REX}{_tails(ONE_BYTE, z)})"
    return rf"{REX}\x0f(?:{_tails(TWO_BYTE, z)}|\x38.{MODRM}|\x3a.{MODRM}.)"


@dataclass(frozen=True)
class LegacyForm:
    """A counted instruction in the legacy encoding: [prefixes] `last` [REX] 0F `opcode` `then`."""

    cls: str
    last: str  # the mandatory prefix (66, F2, F3), if any
    opcode: str  # after 0F
    then: str  # what follows (ModRM, displacement, immediate)
    rex: str = REX
    checked: bool = False  # the look-ahead must see `then` too (the opcode alone is not enough)

    @property
    def pattern(self) -> str:
        return rf"{PREFIX}*{self.last}{self.rex}\x0f{self.opcode}{self.then}"

    @property
    def start(self) -> str:
        """What the look-ahead checks, after the prefixes."""
        return rf"{self.last}{self.rex}\x0f{self.opcode}" + (self.then if self.checked else "")


LEGACY_FORMS = (
    LegacyForm("v2", r"\xf3", r"\xb8", MODRM),  # POPCNT
    LegacyForm("v2", r"\xf2", r"[\x12\xf0\xd0\x7c\x7d]", MODRM),  # SSE3
    LegacyForm("v2", r"\xf3", r"[\x12\x16]", MODRM),
    LegacyForm("v2", r"\x66", r"[\xd0\x7c\x7d]", MODRM),
    LegacyForm("v2", "", r"\x38[\x00-\x0b\x10-\x41]", MODRM),  # SSSE3, SSE4.1, PCMPGTQ
    LegacyForm("v2", "", r"\x3a[\x08-\x0f\x14-\x17\x20-\x22\x40-\x42\x60-\x63]", MODRM + "."),
    LegacyForm("v2", "", r"\xc7", _modrm((1,), memory_only=True), rex=REX_W, checked=True),  # CMPXCHG16B
    LegacyForm("crc32", r"\xf2", r"\x38[\xf0\xf1]", MODRM),
    LegacyForm("pclmul", r"\x66", r"\x3a\x44", MODRM + "."),
    LegacyForm("v3", r"\xf3", r"\xbd", MODRM),  # LZCNT (BSR on older CPUs: wrong results, not a fault)
    LegacyForm("v3", "", r"\x38[\xf0\xf1]", MODRM),  # MOVBE (CRC32, with F2, is tried first)
)


def _generic() -> str:
    """Any legacy-encoded instruction (no VEX/EVEX) not of a counted class, sized right with
    and without a 66 prefix. Only the 0F maps hold counted ones, so only they pay for the
    look-ahead that leaves those to their own group, and it looks at their opcodes only."""
    no66, with66 = f"{PREFIX_NO_66}*", rf"{PREFIX_NO_66}*\x66{PREFIX}*"
    counted = f"{PREFIX}*(?:" + "|".join(form.start for form in LEGACY_FORMS) + ")"
    return (
        rf"(?:{no66}{_legacy(4, escaped=False)}|{with66}{_legacy(2, escaped=False)}"
        rf"|(?!{counted})(?:{no66}{_legacy(4, escaped=True)}|{with66}{_legacy(2, escaped=True)}))"
    )


_VEX_IMM = r"[\x70-\x73\xc2\xc4-\xc6]"  # 0F-map opcodes with an imm8
_VEX_MAP1 = rf"(?:\x77|{_VEX_IMM}{MODRM}.|[^\x77\x70-\x73\xc2\xc4-\xc6]{MODRM})"  # 0F 77: VZEROUPPER, no ModRM
_C4_MAP = {m: _cls(b for b in range(256) if b & 0x1F == m) for m in (1, 2, 3)}
_EVEX_P0 = {m: _cls(b for b in range(256) if b & 0x0F == m) for m in (1, 2, 3, 5, 6)}
_EVEX_P1 = _cls(b for b in range(256) if b & 0x04)

_VEX = (
    rf"{VEX_PREFIX}\xc5.{_VEX_MAP1}",
    rf"{VEX_PREFIX}\xc4{_C4_MAP[1]}.{_VEX_MAP1}",
    rf"{VEX_PREFIX}\xc4{_C4_MAP[2]}..{MODRM}",
    rf"{VEX_PREFIX}\xc4{_C4_MAP[3]}..{MODRM}.",
)
_EVEX = (
    rf"{VEX_PREFIX}\x62{_EVEX_P0[1]}{_EVEX_P1}.(?:{_VEX_IMM}{MODRM}.|.{MODRM})",
    rf"{VEX_PREFIX}\x62(?:{_EVEX_P0[2]}|{_EVEX_P0[5]}|{_EVEX_P0[6]}){_EVEX_P1}..{MODRM}",
    rf"{VEX_PREFIX}\x62{_EVEX_P0[3]}{_EVEX_P1}..{MODRM}.",
)
PATTERNS: Mapping[str, str] = {
    cls: "|".join(
        [form.pattern for form in LEGACY_FORMS if form.cls == cls]
        + list(_VEX if cls == "v3" else _EVEX if cls == "v4" else ())
    )
    for cls in CLASSES
}


@functools.cache
def _sweep_regex() -> re.Pattern[bytes]:
    """The sweep's regex, compiled on first use (some 40 ms: runs that read nothing skip it)."""
    return re.compile(
        (
            rf"(?=((?:{_generic()}){{1,{RUN}}}))\1"
            + "".join(f"|(?P<{name}>{PATTERNS[name]})" for name in CLASSES)
            + "|(?P<bad>.)"
        ).encode("ascii"),
        re.DOTALL,
    )


def sweep(code: bytes | memoryview) -> Iterator[tuple[str, int]]:
    """(class, offset) of every counted instruction of `code`, in order; undecodable bytes
    as ("bad", offset)."""
    for match in _sweep_regex().finditer(code):
        kind = match.lastgroup
        if kind is not None:
            yield kind, match.start()


@dataclass(frozen=True)
class Levels:
    needs: str
    uses: str
    basis: str  # how `needs` was decided, in words


def levels(counts: Mapping[str, int], functions: Mapping[str, int], total: int, declared: int = 0) -> Levels:
    """The level a program needs and the highest it uses, from the instructions counted
    per class, the functions holding each class (of `total`), and the ISA-needed bits of
    its ELF note (bit 0 baseline, 1 v2, 2 v3, 3 v4; the baseline bit says nothing: see above)."""
    uses = max((LEVEL_OF_CLASS[c] for c, n in counts.items() if n and c in LEVEL_OF_CLASS), default=0)
    threshold = max(MIN_FUNCTIONS, SPREAD * total)
    spread = [
        level
        for cls, level in LEVEL_OF_CLASS.items()
        if cls != "crc32" and functions.get(cls, 0) >= threshold  # CRC32 is always a chosen path
    ]
    inferred = max(spread, default=0)
    stated = min(declared.bit_length() - 1, len(LEVELS) - 1) if declared else -1
    stated = stated if stated > 0 else -1  # the baseline note: the start files', every program's
    needs = max(inferred, stated)
    if stated > 0 and stated >= inferred:
        basis = f"an ELF note of its objects states {LEVELS[stated]} (GNU property x86 ISA needed)"
    elif inferred > 0:
        cls = next(c for c, level in LEVEL_OF_CLASS.items() if level == inferred and c != "crc32")
        basis = f"{LEVELS[inferred]} instructions in {functions[cls]:,} of {total:,} functions"
    else:
        found = max((functions.get(c, 0) for c in ("v2", "crc32", "v3", "v4")), default=0)
        basis = "no instructions above the baseline" if not found else "instructions above it in a few functions only"
    return Levels(LEVELS[needs], LEVELS[uses], basis)
