"""The build audit answered per target CPU (app/audit/targets.py), on the real test programs
of tests/data/audit (built by build.sh with Debian's compilers) and on the facts alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecoready.audit.program import audit_program
from ecoready.audit.targets import fit_on, program_fits
from ecoready.domain.cpus import Fit, Target, cpus
from ecoready.domain.model import BinaryAudit

DATA = Path(__file__).resolve().parents[1] / "data" / "audit"


def audit(name: str) -> BinaryAudit:
    return audit_program("atomics", f"/usr/sbin/{name}", (DATA / name).read_bytes())


def fit(name: str, target: str) -> tuple[Fit, list[str]]:
    found = fit_on(audit(name), cpus()[target])
    assert found is not None
    return found.fit, [lack.code for lack in found.lacks]


@pytest.mark.parametrize(
    ("program", "target", "fit_", "codes"),
    [
        ("arm64-lse", "graviton1", Fit.NOT, ["lse"]),  # ARMv8.0: SIGILL at the first atomic
        ("arm64-lse", "rpi4", Fit.NOT, ["lse"]),
        ("arm64-lse", "graviton2", Fit.RUNS, []),
        ("arm64-lse", "apple-m1", Fit.RUNS, []),
        ("arm64-outline", "rpi4", Fit.SLOWER, ["lse-outline"]),  # exclusive loops chosen at run time
        ("arm64-outline", "graviton3", Fit.RUNS, []),
        ("arm64-v8.0", "graviton4", Fit.SLOWER, ["no-lse"]),  # no LSE in the build: loops under contention
        ("arm64-v8.0", "rpi4", Fit.RUNS, []),
        ("arm64-crc", "rpi4", Fit.SLOWER, ["pmull"]),  # BCM2711 has CRC32, no crypto extension
        ("arm64-crc", "graviton1", Fit.RUNS, []),
        # (built -march=armv8-a without outline atomics: slower on LSE cores too)
        ("arm64-4k", "rpi5", Fit.NOT, ["page-size", "no-lse"]),  # Raspberry Pi OS's 16 KiB kernel on a Pi 5
        ("arm64-4k", "grace", Fit.NOT, ["page-size", "no-lse"]),  # 64 KiB kernels are Grace's usual ones
        ("arm64-4k", "rpi4", Fit.RUNS, []),
        ("arm64-4k", "graviton1", Fit.CAVEAT, ["page-other"]),  # fine on 4 KiB, not on a 64 KiB kernel
        ("arm64-64k", "grace", Fit.SLOWER, ["no-lse"]),
        ("arm64-64k", "graviton1", Fit.RUNS, []),
        ("amd64-x86-64-v3", "sandybridge", Fit.NOT, ["x86-level"]),
        ("amd64-x86-64-v3", "haswell", Fit.RUNS, []),
        ("amd64-x86-64-v4", "zen3", Fit.NOT, ["x86-level"]),  # no AVX-512 before Zen 4
        ("amd64-x86-64-v4", "zen4", Fit.RUNS, []),
        ("amd64-x86-64-v2", "nehalem", Fit.RUNS, []),
    ],
)
def test_a_real_program_on_a_named_cpu(program: str, target: str, fit_: Fit, codes: list[str]) -> None:
    assert fit(program, target) == (fit_, codes)


def test_a_dispatching_program_has_a_caveat_on_an_older_cpu() -> None:
    found = audit("amd64-dispatch")
    assert found.x86_needs == "x86-64" and found.x86_uses != "x86-64"
    assert fit("amd64-dispatch", "nehalem") == (Fit.CAVEAT, ["x86-paths"])


def test_no_fit_for_another_arch_or_a_program_not_read() -> None:
    assert fit_on(audit("arm64-lse"), cpus()["zen4"]) is None
    assert fit_on(BinaryAudit("mariadbd"), cpus()["graviton2"]) is None
    assert fit_on(BinaryAudit("mariadbd", "/x", machine="arm64", note="not read"), cpus()["graviton2"]) is None


def test_sve_instructions_do_not_run_on_a_core_without_sve() -> None:
    sve = BinaryAudit("p", "/p", machine="arm64", load_align=65536, lse="inline", sve_count=40)
    assert fit_on(sve, cpus()["graviton2"]) is not None
    assert [(f.fit, f.lacks[0].code) for f in [fit_on(sve, cpus()["graviton2"])] if f] == [(Fit.NOT, "sve")]
    graviton3 = fit_on(sve, cpus()["graviton3"])
    assert graviton3 is not None and graviton3.fit is Fit.RUNS


def test_program_fits_keeps_the_matrix_names_and_skips_other_arches() -> None:
    targets = [Target("aws:m6g.large", "graviton2"), Target("rpi4", "rpi4"), Target("zen4", "zen4")]
    (fits,) = program_fits([audit("arm64-lse")], targets)
    assert [(t.target, t.cpu, t.fit) for t in fits.targets] == [
        ("aws:m6g.large", "graviton2", Fit.RUNS),
        ("rpi4", "rpi4", Fit.NOT),
    ]
