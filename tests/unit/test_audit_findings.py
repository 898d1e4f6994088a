"""The build audit's findings in plain words, crossed with a platform's fitness."""

from __future__ import annotations

from dataclasses import replace

from ecoready.audit.findings import findings, mislabelled, summary
from ecoready.domain.model import BinaryAudit, Finding, PlatformFitness, Severity

OUTLINE = BinaryAudit(
    "mariadbd", "/usr/sbin/mariadbd", "arm64", 25_363_600, 65536, lse="outline", lse_count=24, llsc_count=24,
    crc32_count=141, pmull_count=2,
)  # fmt: skip
BASELINE = BinaryAudit(
    "mariadbd", "/usr/sbin/mariadbd", "amd64", 25_997_608, 4096, crc32_count=423, pmull_count=10,
    x86_needs="x86-64", x86_uses="x86-64-v4", x86_basis="instructions above it in a few functions only",
)  # fmt: skip
NEOVERSE = PlatformFitness(
    "graviton", "arm64", False, machine="aarch64", cpus=64, features=("lse", "crc32", "pmull"), page_size=4096
)
CORTEX_A72 = replace(NEOVERSE, features=("crc32", "pmull"), missing=("lse",))
QEMU_X86 = PlatformFitness("local", "amd64", True, machine="x86_64", x86_level="x86-64", features=("sse4.2",))


def by_code(found: tuple[Finding, ...], code: str) -> Finding:
    return next(f for f in found if f.code == code)


def test_outline_atomics_on_a_cpu_with_lse_are_fine() -> None:
    found = findings([OUTLINE], "arm64", NEOVERSE)
    lse = by_code(found, "lse-outline")
    assert lse.severity is Severity.FINE
    assert lse.text == "mariadbd picks LSE atomics at run time (outline atomics); this CPU has LSE: it uses them"
    assert by_code(found, "crc32").text == (
        "mariadbd computes CRC-32C in hardware (CRC32 and PMULL); this CPU has them: fine"
    )
    assert by_code(found, "page-align").severity is Severity.FINE


def test_outline_atomics_on_a_cpu_without_lse_fall_back_to_loops() -> None:
    lse = by_code(findings([OUTLINE], "arm64", CORTEX_A72), "lse-outline")
    assert lse.severity is Severity.HAZARD
    assert "lacks them: it falls back to exclusive load/store loops" in lse.text


def test_outline_atomics_beside_inline_exclusive_loops_say_both() -> None:
    # HAProxy on arm64: outline helpers (each an LSE instruction and its loop) and its own
    # 128-bit LDXP/STXP loops, which no helper covers
    haproxy = replace(OUTLINE, program="haproxy", lse_count=12, llsc_count=14)
    lse = by_code(findings([haproxy], "arm64", NEOVERSE), "lse-outline")
    assert lse.text == (
        "haproxy picks LSE atomics at run time (outline atomics); this CPU has LSE: it uses them; it also "
        "holds 2 exclusive load/store loops of its own (inline, such as 128-bit LDXP/STXP), which run as "
        "loops on every CPU"
    )


def test_a_build_without_lse_on_a_64_core_host_expects_contention() -> None:
    plain = replace(OUTLINE, lse="none", lse_count=0)
    lse = by_code(findings([plain], "arm64", NEOVERSE), "no-lse")
    assert lse.severity is Severity.HAZARD
    assert lse.text.startswith("mariadbd is built without LSE atomics on a 64-core host: expect lock contention")


def test_inline_lse_on_an_armv8_0_core_cannot_run() -> None:
    inline = replace(OUTLINE, lse="inline")
    lse = by_code(findings([inline], "arm64", CORTEX_A72), "lse-inline")
    assert lse.severity is Severity.FATAL
    assert "dies of SIGILL" in lse.text
    assert by_code(findings([inline], "arm64", NEOVERSE), "lse-inline").severity is Severity.FINE
    assert by_code(findings([inline], "arm64", None), "lse-inline").severity is Severity.NOTE


def test_4k_aligned_segments_are_a_hazard_and_fatal_on_a_64k_kernel() -> None:
    small = replace(OUTLINE, load_align=4096)
    assert by_code(findings([small], "arm64", NEOVERSE), "page-4k").severity is Severity.HAZARD
    fatal = by_code(findings([small], "arm64", replace(NEOVERSE, page_size=65536)), "page-4k")
    assert fatal.severity is Severity.FATAL
    assert fatal.text == "mariadbd's segments are 4 KiB-aligned, this kernel has 64 KiB pages: it cannot load"


def test_no_crc32_is_said_for_servers_and_not_for_a_proxy() -> None:
    server = replace(OUTLINE, crc32_count=0, pmull_count=0)
    assert by_code(findings([server], "arm64", None), "no-crc32").severity is Severity.HAZARD
    proxy = replace(server, program="haproxy")
    assert not [f for f in findings([proxy], "arm64", None) if "crc32" in f.code]


def test_an_x86_level_above_the_emulated_cpu_is_fatal_and_names_the_fix() -> None:
    v3 = replace(BASELINE, x86_needs="x86-64-v3", x86_uses="x86-64-v3")
    level = by_code(findings([v3], "amd64", QEMU_X86), "x86-level")
    assert level.severity is Severity.FATAL
    assert level.text == (
        "mariadbd needs x86-64-v3, this qemu CPU offers x86-64 only: it stops at its first such "
        "instruction: set QEMU_CPU=max or use a newer qemu"
    )
    fine = by_code(findings([BASELINE], "amd64", QEMU_X86), "x86-level")
    assert fine.severity is Severity.FINE
    assert (
        fine.text == "mariadbd needs x86-64, this qemu CPU offers x86-64: fine (it has x86-64-v4 instructions in a few "
        "functions: paths chosen at run time, or code that needs x86-64-v4 when it is reached)"
    )
    unknown = by_code(findings([v3], "amd64", None), "x86-level")
    assert unknown.text.startswith("mariadbd needs x86-64-v3: CPUs before Haswell")


def test_a_binary_of_another_arch_is_mislabelled() -> None:
    found = findings([BASELINE], "arm64", NEOVERSE)
    assert found == (
        Finding(
            "mariadbd",
            "mislabelled",
            Severity.FATAL,
            "mislabelled binary: /usr/sbin/mariadbd is built for amd64, the image says arm64",
        ),
    )
    assert mislabelled([BASELINE, OUTLINE], "arm64") == [BASELINE]
    assert mislabelled([BinaryAudit("mysqld"), replace(BASELINE, note="not an ELF file")], "arm64") == []


def test_not_found_and_unreadable_programs_are_notes() -> None:
    found = findings(
        [BinaryAudit("mariadbd or mysqld"), BinaryAudit("proxysql", "/usr/bin/proxysql", note="x")], "arm64", None
    )
    assert [(f.code, f.severity) for f in found] == [("not-found", Severity.NOTE), ("unreadable", Severity.NOTE)]
    assert found[0].text == "mariadbd or mysqld: not in the image (looked along its PATH)"


def test_a_platform_that_could_not_be_asked_is_no_platform() -> None:
    unasked = PlatformFitness("local", "arm64", True, error="survey did not run")
    assert findings([OUTLINE], "arm64", unasked) == findings([OUTLINE], "arm64", None)


def test_the_summary_line_names_each_program_briefly() -> None:
    assert summary([OUTLINE, BASELINE, BinaryAudit("myloader")]) == (
        "mariadbd: arm64, LSE at run time, CRC32, PMULL, 64 KiB segments; "
        "mariadbd: amd64, needs x86-64, uses x86-64-v4; myloader: not found"
    )
