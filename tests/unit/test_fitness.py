"""Platform fitness parsers and hazards, on real text (tests/data/fitness/README.md says
where each sample comes from)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ecoready.domain.model import PlatformFitness
from ecoready.run.fitness import (
    arm64_flags_from_hwcap,
    auxv,
    failed,
    fitness_from_survey,
    hazards,
    parse_cpuinfo,
    sections,
    thp_mode,
    x86_level_from_flags,
    x86_level_from_hwcaps,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "fitness"


def sample(name: str) -> str:
    return (DATA / name).read_text()


def codes(f: PlatformFitness) -> list[str]:
    return [h.code for h in f.hazards]


def test_graviton3_cpuinfo_names_the_core_and_its_features() -> None:
    cpu = parse_cpuinfo(sample("graviton3-cpuinfo.txt"))
    assert cpu.model == "ARM Neoverse-V1"
    assert (cpu.implementer, cpu.part) == ("0x41", "0xd40")
    assert {"atomics", "crc32", "pmull", "sha1", "sha2", "sve"} <= cpu.flags
    assert cpu.processors == 2 and cpu.mhz is None  # arm64 kernels print no clock


def test_cortex_a53_has_no_lse_atomics_and_says_what_that_costs() -> None:
    survey = "==uname\naarch64\n5.10\n==pagesize\n4096\n==cpuinfo\n" + sample("rk3399-cpuinfo.txt")
    f = fitness_from_survey(survey, host="firefly", arch="arm64", emulated=False)
    assert f.cpu_model == "ARM Cortex-A53"
    assert f.missing == ("lse",) and set(f.features) == {"crc32", "pmull", "sha1", "sha2"}
    assert codes(f) == ["no-lse"]
    assert "exclusive load/store" in f.hazards[0].text


def test_epyc_cpuinfo_gives_model_clock_and_x86_level() -> None:
    cpu = parse_cpuinfo(sample("epyc-cpuinfo.txt"))
    assert cpu.model == "AMD EPYC" and cpu.mhz == 2596.094 and cpu.processors == 2
    assert x86_level_from_flags(cpu.flags) == "x86-64-v4"


def test_x86_levels_need_every_flag_of_the_level() -> None:
    v2 = {"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"}
    assert x86_level_from_flags(set()) == "x86-64"
    assert x86_level_from_flags(v2) == "x86-64-v2"
    assert x86_level_from_flags(v2 - {"popcnt"}) == "x86-64"
    v3 = v2 | {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}
    assert x86_level_from_flags(v3) == "x86-64-v3"
    assert x86_level_from_flags(v3 | {"avx512f"}) == "x86-64-v3"  # v4 needs all five


def test_native_amd64_survey_of_the_build_machine() -> None:
    f = fitness_from_survey(sample("lab-amd64.txt"), host="local", arch="amd64", emulated=False, image="img")
    assert (f.machine, f.kernel, f.cpu_model, f.cpus) == ("x86_64", "6.18.44-fc-v657", "AMD EPYC", 2)
    assert f.features == ("sse4.2", "pclmul", "avx2") and f.missing == ()
    assert f.x86_level == "x86-64-v4"  # from the loader's glibc-hwcaps, not guessed
    assert (f.page_size, f.cache_line, f.thp, f.numa_nodes) == (4096, 64, "madvise", 1)
    assert f.hazards == () and f.error == "" and f.image == "img"


def test_emulated_arm64_survey_sees_qemus_cpu() -> None:
    f = fitness_from_survey(sample("lab-arm64.txt"), host="local", arch="arm64", emulated=True)
    assert f.machine == "aarch64" and f.cpu_model == "ARMv8 Processor rev 0 (v8l)"
    assert set(f.features) == {"lse", "crc32", "pmull", "sha1", "sha2"}
    assert f.x86_level == "" and f.page_size == 4096
    assert codes(f) == ["emulated"]


def test_loader_hwcaps_and_auxv() -> None:
    got = sections(sample("lab-amd64.txt"))
    assert x86_level_from_hwcaps(got["hwcaps"]) == "x86-64-v4"
    assert auxv(got["auxv"])["AT_PAGESZ"] == "4096"
    arm = auxv(sections(sample("lab-arm64.txt"))["auxv"])
    # arm64 AT_HWCAP bits (Linux asm/hwcap.h): pmull 4, sha1 5, sha2 6, crc32 7, atomics 8
    assert arm64_flags_from_hwcap(arm["AT_HWCAP"]) == {"pmull", "sha1", "sha2", "crc32", "atomics"}
    assert arm64_flags_from_hwcap(hex(1 << 7)) == {"crc32"}
    assert arm64_flags_from_hwcap("not hex") == frozenset()


def test_a_kernel_without_a_features_line_falls_back_to_hwcap() -> None:
    survey = "==uname\naarch64\n6.1\n==auxv\nAT_HWCAP: 0x7f\n==cpuinfo\nprocessor\t: 0\n"
    f = fitness_from_survey(survey, host="h", arch="arm64", emulated=False)
    assert "lse" in f.missing and "crc32" not in f.features
    assert codes(f) == ["no-lse", "no-crc32"]


def test_thp_numa_pages_and_cache_lines_are_hazards() -> None:
    base = fitness_from_survey(sample("lab-amd64.txt"), host="h", arch="amd64", emulated=False)
    risky = replace(base, thp="always", numa_nodes=2, cache_line=128)
    assert codes(replace(risky, hazards=hazards(risky))) == ["thp-always", "numa", "cache-line"]
    assert thp_mode(["[always] madvise never"]) == "always"
    big = replace(base, arch="arm64", page_size=65536, features=(), missing=())
    (page,) = hazards(big, kinds=["server", "proxysql"])
    assert page.code == "page-64k" and "64 KiB pages" in page.text and "in this run: ProxySQL" in page.text
    (general,) = hazards(big, kinds=["server"])
    assert "known to need a 64k-safe build: ProxySQL" in general.text


def test_old_x86_cpus_are_named_for_the_images_they_cannot_run() -> None:
    base = fitness_from_survey(sample("lab-amd64.txt"), host="h", arch="amd64", emulated=False)
    (v1,) = hazards(replace(base, x86_level="x86-64"))
    assert v1.code == "x86-64-level" and "UBI 9" in v1.text and "x86-64-v2" in v1.text
    (v2,) = hazards(replace(base, x86_level="x86-64-v2"))
    assert "UBI 10" in v2.text and "x86-64-v3" in v2.text
    assert hazards(replace(base, x86_level="x86-64-v3")) == ()


def test_a_container_of_the_wrong_arch_is_an_error_not_a_fact() -> None:
    f = fitness_from_survey(sample("lab-amd64.txt"), host="h", arch="arm64", emulated=True)
    assert "ran as x86_64, not aarch64" in f.error


def test_no_output_and_failures_keep_the_emulation_hazard() -> None:
    f = fitness_from_survey("exec /bin/sh: exec format error\n", host="h", arch="arm64", emulated=True)
    assert f.error.startswith("survey did not run: exec /bin/sh: exec format error")
    g = failed("h", "arm64", True, "no image to ask with")
    assert g.error == "no image to ask with" and codes(g) == ["emulated"]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_any_container_output_parses_without_raising(text: str) -> None:
    f = fitness_from_survey("==uname\n" + text, host="h", arch="amd64", emulated=False)
    assert all(len(v) <= 160 for v in (f.machine, f.kernel, f.cpu_model))
