"""`doctor` names a CPU by its part (MIDR on arm64, vendor/family/model on x86), through
ecoready's target CPU file; its flags only when the part is not there. The cpuinfo texts
are the kernels' (first processor block), as Graviton2, a Raspberry Pi 4 and an AMD host
print them; the engine's CPU is read here only when the engine runs on this kernel."""

from __future__ import annotations

from pathlib import Path

from ecoready.run.fitness import fitness_from_survey
from ecoready.ui.verbs.doctor import cpu_said, engine_cpu, midr_part, this_cpu

GRAVITON2 = """processor	: 0
BogoMIPS	: 243.75
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs
CPU implementer	: 0x41
CPU architecture: 8
CPU variant	: 0x3
CPU part	: 0xd0c
CPU revision	: 1
"""
RPI4 = GRAVITON2.replace("aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs",
                         "crc32 cpuid").replace("0xd0c", "0xd08")  # fmt: skip
AMD = """processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 25
model		: 17
model name	: AMD EPYC 9R14 96-Core Processor
flags		: fpu sse2 pni ssse3 sse4_1 sse4_2 popcnt cx16 lahf_lm avx avx2 bmi1 bmi2 f16c fma abm movbe xsave pclmulqdq
"""


def test_a_host_is_named_by_its_part() -> None:
    assert cpu_said(GRAVITON2) == "this host: Neoverse N1, AWS Graviton2 / Ampere Altra class (MIDR 0x41:0xd0c)"
    assert cpu_said(RPI4) == "this host: Cortex-A72, AWS Graviton1 / Raspberry Pi 4 class (MIDR 0x41:0xd08)"
    assert cpu_said(AMD) == "this host: Zen 4, AMD Zen 4 (EPYC Genoa) class (family/model AuthenticAMD:0x19:0x11)"


def test_an_unknown_part_is_said_with_its_flags() -> None:
    assert cpu_said(GRAVITON2.replace("0xd0c", "0xd99")) == (
        "this host: ARM part 0xd99 (part 0x41:0xd99, not one of ecoready's target CPUs; by its flags: "
        "LSE, CRC32, PMULL, SHA1, SHA2)"
    )
    assert cpu_said(AMD.replace("model		: 17", "model		: 250")) == (
        "this host: AMD EPYC 9R14 96-Core Processor (part AuthenticAMD:0x19:0xfa, not one of ecoready's "
        "target CPUs; by its flags: x86-64-v3, sse4.2, pclmul, avx2)"
    )


def test_the_midr_register_names_a_core_the_cpuinfo_does_not() -> None:
    assert midr_part("0x00000000413fd0c1") == "0x41:0xd0c"
    assert midr_part("garbage") == ""
    no_part = "processor	: 0\nFeatures	: fp asimd crc32 atomics\n"
    assert (
        cpu_said(no_part, "0x00000000610f0230")
        == "this host: Apple M1, Apple M1 (Docker Desktop) class (MIDR 0x61:0x023)"
    )


def test_files_are_read_where_the_engine_runs_on_this_kernel(tmp_path: Path) -> None:
    (tmp_path / "cpuinfo").write_text(GRAVITON2)
    assert this_cpu(str(tmp_path / "cpuinfo"), str(tmp_path / "none")).startswith("this host: Neoverse N1")
    assert this_cpu(str(tmp_path / "none")).startswith("not readable")
    assert engine_cpu(same_kernel=False).startswith("engine CPU: on another kernel")


def test_the_platform_survey_keeps_the_part() -> None:
    survey = "==uname\naarch64\n6.1\n==cpuinfo\n" + GRAVITON2 + "==end\n"
    assert fitness_from_survey(survey, host="h", arch="arm64", emulated=False).cpu_part == "0x41:0xd0c"
    survey = "==uname\nx86_64\n6.1\n==cpuinfo\n" + AMD + "==end\n"
    assert fitness_from_survey(survey, host="h", arch="amd64", emulated=False).cpu_part == "AuthenticAMD:0x19:0x11"


def test_an_emulated_platform_has_no_part() -> None:
    """qemu-user prints a cpuinfo of its own model: not a machine to name."""
    survey = "==uname\naarch64\n6.1\n==cpuinfo\n" + GRAVITON2 + "==end\n"
    assert fitness_from_survey(survey, host="h", arch="arm64", emulated=True).cpu_part == ""
