"""The build audit's instruction scans and ELF reader on hand-made input: x86-64 bytes from
GNU as (immediates full of VEX and EVEX bytes included), A64 words from GNU as, the level
rule, and files no parser should choke on."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ecoready.audit import arm64, x86
from ecoready.audit.program import audit_program

DATA = Path(__file__).resolve().parents[1] / "data" / "audit"

# `as` on x86-64 (objdump offsets on the right): what the sweep must count, and where
X86_CODE = bytes.fromhex(
    "f3480fb8c7"  # 0x00 popcnt %rdi,%rax                  v2
    "c5fd6f07"  # 0x05 vmovdqa (%rdi),%ymm0                  v3
    "62f17d486f07"  # 0x09 vmovdqa32 (%rdi),%zmm0            v4
    "f2480f38f1c1"  # 0x0f crc32 %rcx,%rax                    crc32
    "660f3a44c100"  # 0x15 pclmullqlqdq %xmm1,%xmm0           pclmul
    "b8c5c5c5c5"  # 0x1b mov $0xc5c5c5c5,%eax                 (VEX bytes in an immediate)
    "48b86262626262626262"  # 0x20 movabs $0x6262...,%rax    (EVEX bytes in an immediate)
    "f3480fbdc7"  # 0x2a lzcnt %rdi,%rax                      v3
    "f3480fbcc7"  # 0x2f tzcnt %rdi,%rax                      (runs as bsf: not counted)
    "0f38f007"  # 0x34 movbe (%rdi),%eax                      v3
    "660f3800c1"  # 0x38 pshufb %xmm1,%xmm0                   v2
    "480fc70f"  # 0x3d cmpxchg16b (%rdi)                      v2
    "c5f877"  # 0x41 vzeroupper                               v3
    "c4e2c8f2c2"  # 0x44 andn %rdx,%rsi,%rax                  v3
    "66c707c562"  # 0x49 movw $0x62c5,(%rdi)                  (66: a 2-byte immediate)
    "488d05c5c46200"  # 0x4e lea 0x62c4c5(%rip),%rax         (VEX/EVEX bytes in a displacement)
    "660f3a0bc109"  # 0x55 roundsd $9,%xmm1,%xmm0             v2
)


def test_the_x86_sweep_counts_each_class_at_its_instruction() -> None:
    found = [(kind, offset) for kind, offset in x86.sweep(X86_CODE)]
    assert found == [
        ("v2", 0x00),
        ("v3", 0x05),
        ("v4", 0x09),
        ("crc32", 0x0F),
        ("pclmul", 0x15),
        ("v3", 0x2A),
        ("v3", 0x34),
        ("v2", 0x38),
        ("v2", 0x3D),
        ("v3", 0x41),
        ("v3", 0x44),
        ("v2", 0x55),
    ]


def test_the_x86_sweep_stays_in_step_over_long_runs_of_plain_code() -> None:
    plain = bytes.fromhex("4889f8") * 10_000  # mov %rdi,%rax, more than one match's worth
    found = list(x86.sweep(plain + X86_CODE[:5] + plain + X86_CODE[5:9]))
    assert found == [("v2", 30_000), ("v3", 60_005)]


def test_an_undecodable_byte_is_skipped_not_fatal() -> None:
    found = list(x86.sweep(bytes.fromhex("06") + X86_CODE[:5]))  # 06: push es, invalid in 64-bit mode
    assert found == [("bad", 0), ("v2", 1)]


# `as -march=armv8.3-a+crc+crypto`, as little-endian words
A64 = {
    "casal w0, w1, [x2]": (0x88E0FC41, "lse"),
    "ldaddal x0, x1, [x2]": (0xF8E00041, "lse"),
    "swpal w0, w1, [x2]": (0xB8E08041, "lse"),
    "stadd w0, [x1]": (0xB820003F, "lse"),
    "ldapr w0, [x1]": (0xB8BFC020, None),  # in the LD<op> space, but not LSE
    "ldaxr w0, [x1]": (0x885FFC20, "llsc"),
    "stlxr w2, w0, [x1]": (0x8802FC20, None),  # the store of the loop: loads are counted
    "crc32cx w0, w0, x1": (0x9AC15C00, "crc32"),
    "crc32b w0, w0, w1": (0x1AC14000, "crc32"),
    "pmull v0.1q, v1.1d, v2.1d": (0x0EE2E020, "pmull"),
    "pmull v0.8h, v1.8b, v2.8b": (0x0E22E020, None),  # 8-bit polynomials: base NEON
    "ldar w0, [x1]": (0x88DFFC20, None),
    "add x0, x1, x2": (0x8B020020, None),
}


def test_each_a64_word_is_counted_in_its_class_and_only_there() -> None:
    for text, (word, kind) in A64.items():
        found = list(arm64.sweep(word.to_bytes(4, "little")))
        assert found == ([(kind, 0)] if kind else []), text


def test_a64_words_are_read_on_word_boundaries_only() -> None:
    casal = (0x88E0FC41).to_bytes(4, "little")
    add = (0x8B020020).to_bytes(4, "little")
    code = add * 3000 + casal + add[:2]  # more than one match's worth before it; a torn word at the end
    assert list(arm64.sweep(code)) == [("lse", 12_000)]
    assert list(arm64.sweep(b"\0\0" + casal + b"\0\0")) == []  # straddling two words: not an instruction


def test_an_outline_helper_is_its_lse_instruction_after_cbz_w16() -> None:
    cbz_w16 = (0x34000050).to_bytes(4, "little")  # cbz w16, .+8
    casal = (0x88E0FC41).to_bytes(4, "little")
    assert arm64.outline_helper(cbz_w16 + casal, 4)
    assert not arm64.outline_helper((0x8B020020).to_bytes(4, "little") + casal, 4)


def test_a_level_is_needed_when_spread_over_the_code_not_when_in_a_few_functions() -> None:
    spread = x86.levels({"v3": 900}, {"v3": 300}, 10_000)
    assert (spread.needs, spread.uses) == ("x86-64-v3", "x86-64-v3")
    assert spread.basis == "x86-64-v3 instructions in 300 of 10,000 functions"
    chosen = x86.levels({"v4": 70, "v3": 43, "crc32": 423}, {"v4": 1, "v3": 1, "crc32": 2}, 35_451)
    assert (chosen.needs, chosen.uses) == ("x86-64", "x86-64-v4")
    # CRC32 is a path chosen at run time however widely it is used
    assert x86.levels({"crc32": 50}, {"crc32": 40}, 100).needs == "x86-64"
    # a level an ELF note states above the baseline counts, and says so
    declared = x86.levels({}, {}, 100, declared=0b10)
    assert (declared.needs, declared.basis) == (
        "x86-64-v2",
        "an ELF note of its objects states x86-64-v2 (GNU property x86 ISA needed)",
    )
    # the baseline note is the start files', in every program: no basis
    assert x86.levels({}, {}, 100, declared=0b1).basis == "no instructions above the baseline"


def test_files_that_are_not_programs_are_said_so() -> None:
    script = audit_program("mysqld", "/usr/sbin/mysqld", (DATA / "script").read_bytes())
    assert script.note == "not an ELF file (a script)"
    assert script.machine == ""
    elf = (DATA / "amd64-x86-64").read_bytes()
    truncated = audit_program("mysqld", "/usr/sbin/mysqld", elf[:200])
    assert truncated.note.startswith("a truncated ELF file")


@settings(max_examples=300, deadline=None)
@given(
    cut=st.integers(min_value=0, max_value=20_000),
    flips=st.lists(st.tuples(st.integers(min_value=0, max_value=8375), st.integers(0, 255)), max_size=12),
)
def test_a_damaged_program_gives_a_note_or_a_result_never_an_exception(cut: int, flips: list[tuple[int, int]]) -> None:
    data = bytearray((DATA / "arm64-64k").read_bytes()[: cut or None])
    for offset, value in flips:
        if offset < len(data):
            data[offset] = value
    audit_program("mariadbd", "/usr/sbin/mariadbd", bytes(data))
