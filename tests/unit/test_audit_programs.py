"""The build audit on real programs: small C programs of ours built with Debian's compilers
for aarch64 and x86-64 (tests/data/audit/build.sh says how each was made), each result
asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecoready.audit.program import audit_program
from ecoready.domain.model import BinaryAudit

DATA = Path(__file__).resolve().parents[1] / "data" / "audit"


def audit(name: str) -> BinaryAudit:
    return audit_program("atomics", f"/usr/sbin/{name}", (DATA / name).read_bytes())


def test_an_armv8_0_build_without_outline_atomics_has_exclusive_loops_only() -> None:
    found = audit("arm64-v8.0")
    assert (found.machine, found.lse, found.lse_count) == ("arm64", "none", 0)
    assert found.llsc_count == 6  # fetch-add, compare-exchange, exchange: each a loop, each also in main
    assert (found.crc32_count, found.pmull_count) == (0, 0)
    assert found.build == "GCC: (Debian 12.2.0-14) 12.2.0; -march=armv8-a; -mno-outline-atomics"


@pytest.mark.parametrize("name", ["arm64-outline", "arm64-outline-stripped"])
def test_outline_atomics_are_lse_chosen_at_run_time_with_or_without_symbols(name: str) -> None:
    found = audit(name)
    assert found.lse == "outline"
    # one libgcc helper per operation used (ldadd8_acq_rel, cas4_acq, swp8_acq_rel), each with
    # its LSE instruction and its exclusive loop
    assert (found.lse_count, found.llsc_count) == (3, 3)


def test_an_armv8_1_build_uses_lse_inline_and_no_exclusive_loop() -> None:
    found = audit("arm64-lse")
    assert (found.lse, found.lse_count, found.llsc_count) == ("inline", 6, 0)
    assert found.crc32_count == 2  # CRC32 is part of ARMv8.1: __crc32cb compiles to crc32cb
    assert found.build.endswith("-march=armv8.1-a")


def test_crc_and_crypto_give_crc32_and_pmull_instructions() -> None:
    found = audit("arm64-crc")
    assert (found.crc32_count, found.pmull_count) == (2, 2)
    assert found.lse == "none"


def test_segment_alignment_is_the_largest_pt_load_alignment() -> None:
    assert audit("arm64-4k").load_align == 4096
    assert audit("arm64-64k").load_align == 65536


def test_branch_protection_is_read_from_the_gnu_property_note() -> None:
    protected, plain = audit("arm64-bti"), audit("arm64-64k")
    assert (protected.bti, protected.pac) == (True, True)
    assert (plain.bti, plain.pac) == (False, False)


@pytest.mark.parametrize(
    ("name", "needs", "uses"),
    [
        ("amd64-x86-64", "x86-64", "x86-64"),
        ("amd64-x86-64-v2", "x86-64-v2", "x86-64-v2"),
        ("amd64-x86-64-v3", "x86-64-v3", "x86-64-v3"),
        ("amd64-x86-64-v4", "x86-64-v4", "x86-64-v4"),
        # baseline, one function built for AVX2 (a path a program would pick at run time)
        ("amd64-dispatch", "x86-64", "x86-64-v3"),
    ],
)
def test_the_x86_64_level_a_build_needs_and_the_highest_it_uses(name: str, needs: str, uses: str) -> None:
    found = audit(name)
    assert (found.machine, found.x86_needs, found.x86_uses) == ("amd64", needs, uses)
    assert found.lse == "" and found.load_align == 4096


def test_the_basis_of_an_x86_level_says_how_it_was_decided() -> None:
    assert audit("amd64-x86-64-v3").x86_basis == "x86-64-v3 instructions in 7 of 12 functions"
    # glibc's start files put a baseline GNU property note in every program (the -march=x86-64-v3
    # build carries the same note): it is not what the program's code needs, and not said so
    assert audit("amd64-dispatch").x86_basis == "instructions above it in a few functions only"
    assert "note" not in audit("amd64-x86-64-v3").x86_basis
    assert audit("amd64-x86-64-v2").build == "GCC: (Debian 12.2.0-14+deb12u1) 12.2.0; -march=x86-64-v2"
