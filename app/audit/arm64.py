"""AArch64 code: the atomics, CRC32 and PMULL instructions it holds.

A64 instructions are 32-bit little-endian words, so each class below is a mask and a value
on a word, turned into four byte classes of one bytes regex; the sweep consumes whole
words (runs of uncounted ones inside `re`), so every match is aligned.

  lse    ARMv8.1 LSE atomics: CAS, CASP, LD<op> (ADD, CLR, EOR, SET, SMAX, SMIN, UMAX,
         UMIN; ST<op> are their aliases), SWP
  llsc   load-exclusive (LDXR, LDAXR, LDXP, LDAXP: one per exclusive load/store loop)
  crc32  CRC32B/H/W/X and CRC32CB/H/W/X
  pmull  PMULL/PMULL2 on 64-bit polynomials (the crypto extension's; CRC-32C folding, GHASH)
  sve    any instruction of the SVE encoding space (op1 = 0010 of the top-level A64 table:
         SVE and SVE2 alike), which a core without SVE does not decode

An LSE instruction right after `cbz w16, …` is one of libgcc's outline-atomics helpers
(`__aarch64_cas4_acq_rel` and kin): they load `__aarch64_have_lse_atomics` into w16, run
the LSE instruction when it is set, and an exclusive loop otherwise.
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass

RUN = 8192  # words of no interest consumed by one match


@dataclass(frozen=True)
class Encoding:
    mask: int
    value: int
    unless_mask: int = 0  # ... and not (word & unless_mask == unless_value)
    unless_value: int = 0

    def matches(self, word: int) -> bool:
        if word & self.mask != self.value:
            return False
        return not (self.unless_mask and word & self.unless_mask == self.unless_value)


ENCODINGS: dict[str, tuple[Encoding, ...]] = {
    "lse": (
        Encoding(0x3FA07C00, 0x08A07C00),  # CAS{,A,L,AL}{,B,H}
        Encoding(0xBFA07C00, 0x08207C00),  # CASP{,A,L,AL}
        # LD<op>/SWP: size 111000 A R 1 Rs o3 opc 00; o3=1 with opc!=000 is LDAPR and kin
        Encoding(0x3F200C00, 0x38200000),
    ),
    "llsc": (
        Encoding(0x3FE00000, 0x08400000),  # LDXR/LDAXR{,B,H}
        Encoding(0xBFE00000, 0x88600000),  # LDXP/LDAXP
    ),
    "crc32": (Encoding(0x7FE0E000, 0x1AC04000),),  # sf 0011010110 Rm 010 C sz
    "pmull": (Encoding(0xBFE0FC00, 0x0EE0E000),),
    "sve": (Encoding(0x1E000000, 0x04000000),),
}
# LDAPR, LD64B, ST64B...: the LD<op> space with o3=1 and opc!=000 (checked word by word)
_NOT_LSE = Encoding(0x3F208C00, 0x38208000, unless_mask=0x00007000, unless_value=0)
CBZ_W16 = Encoding(0xFF00001F, 0x34000010)

CLASSES = tuple(ENCODINGS)


def _byte_class(mask: int, value: int) -> str:
    allowed = [b for b in range(256) if b & mask == value & mask]
    return "[" + "".join(f"\\x{b:02x}" for b in allowed) + "]"


def _word(encoding: Encoding) -> str:
    """The four byte classes (little-endian) of a mask/value pair."""
    return "".join(_byte_class(encoding.mask >> s & 0xFF, encoding.value >> s & 0xFF) for s in (0, 8, 16, 24))


@functools.cache
def _sweep_regex() -> re.Pattern[bytes]:
    """The sweep's regex, compiled on first use."""
    patterns = {name: "|".join(_word(e) for e in encodings) for name, encodings in ENCODINGS.items()}
    counted = "|".join(f"(?:{p})" for p in patterns.values())
    return re.compile(
        (
            rf"(?=((?:(?!{counted})....){{1,{RUN}}}))\1"
            + "".join(f"|(?P<{name}>{pattern})" for name, pattern in patterns.items())
            + r"|(?P<tail>.{1,3}\Z)"
        ).encode("ascii"),
        re.DOTALL,
    )


def word_at(code: bytes | memoryview, offset: int) -> int:
    value: int = struct.unpack_from("<I", code, offset)[0]
    return value


def sweep(code: bytes | memoryview) -> Iterator[tuple[str, int]]:
    """(class, offset) of every counted instruction of `code` (word-aligned from its start)."""
    for match in _sweep_regex().finditer(code):
        kind = match.lastgroup
        if kind is None or kind == "tail":
            continue
        if kind == "lse" and _NOT_LSE.matches(word_at(code, match.start())):
            continue
        yield kind, match.start()


def outline_helper(code: bytes | memoryview, offset: int) -> bool:
    """Whether the LSE instruction at `offset` is an outline-atomics helper's (after `cbz w16`)."""
    return offset >= 4 and CBZ_W16.matches(word_at(code, offset - 4))
