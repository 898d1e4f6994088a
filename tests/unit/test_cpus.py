"""The target CPU file (app/domain/cpus.toml): every entry sourced and dated, ids found by
MIDR and by x86 family/model as Linux's tables give them."""

from __future__ import annotations

import re

import pytest

from ecoready.domain import cpus as cpu_file
from ecoready.domain.cpus import CpuFileError, by_midr, by_x86, cpus, level_rank, parse_cpus

DATE = re.compile(r"\d{4}-\d{2}-\d{2}$")


def test_every_target_has_sources_with_dates() -> None:
    for cpu in cpus().values():
        for source in (cpu.source, cpu.id_source, cpu.pages_source):
            assert source.url.startswith("https://"), cpu.id
            assert DATE.match(source.date), cpu.id
        assert cpu.page_sizes and all(p in (4096, 16384, 65536) for p in cpu.page_sizes)
        assert cpu.midr if cpu.arch == "arm64" else cpu.x86, f"{cpu.id} cannot be recognised on a host"


def test_the_named_machines_are_there() -> None:
    wanted = {"graviton1", "graviton2", "graviton3", "graviton4", "axion", "grace", "cobalt100", "ampere-altra",
              "ampereone", "rpi4", "rpi5", "apple-m1", "apple-m2", "apple-m3", "apple-m4", "haswell", "skylake-sp",
              "icelake-sp", "sapphire-rapids", "zen3", "zen4", "nehalem"}  # fmt: skip
    assert wanted <= set(cpus())


@pytest.mark.parametrize(
    ("implementer", "part", "ids"),
    [
        ("0x41", "0xd0c", {"graviton2", "ampere-altra"}),
        ("0x41", "0xd08", {"graviton1", "rpi4"}),
        ("0x41", "0xd4f", {"graviton4", "axion", "grace"}),
        ("0x6d", "0xd49", {"cobalt100"}),
        ("0x61", "0x23", {"apple-m1"}),
        ("0xC0", "0xAC3", {"ampereone"}),
        ("0x41", "0xfff", set()),
        ("", "", set()),
    ],
)
def test_a_host_is_named_by_its_midr(implementer: str, part: str, ids: set[str]) -> None:
    assert {c.id for c in by_midr(implementer, part)} == ids


@pytest.mark.parametrize(
    ("vendor", "family", "model", "ids"),
    [
        ("GenuineIntel", 6, 0x55, {"skylake-sp"}),
        ("GenuineIntel", 6, 0x8F, {"sapphire-rapids"}),
        ("GenuineIntel", 6, 0x3F, {"haswell"}),
        ("AuthenticAMD", 0x19, 0x01, {"zen3"}),
        ("AuthenticAMD", 0x19, 0x11, {"zen4"}),
        ("AuthenticAMD", 0x17, 0x31, {"zen2"}),
        ("AuthenticAMD", 6, 0x55, set()),
        ("GenuineIntel", None, None, set()),
    ],
)
def test_a_host_is_named_by_its_family_and_model(
    vendor: str, family: int | None, model: int | None, ids: set[str]
) -> None:
    assert {c.id for c in by_x86(vendor, family, model)} == ids


def test_levels_are_ordered() -> None:
    assert level_rank("armv8.0") < level_rank("armv8.2") < level_rank("armv9.0")
    assert level_rank("x86-64-v2") < level_rank("x86-64-v4")
    assert level_rank("bogus") == -1


def test_a_broken_file_is_refused() -> None:
    base = {"sources": {"s": {"url": "https://x", "date": "2024-01-01"}}}
    entry = {"id": "a", "name": "A", "core": "C", "arch": "arm64", "level": "armv8.0", "features": ["lse"],
             "page_sizes": [4096], "series": "a", "generation": 1,
             "source": "s", "id_source": "s", "pages_source": "s"}  # fmt: skip
    assert set(parse_cpus({**base, "cpus": [entry]})) == {"a"}
    with pytest.raises(CpuFileError, match="not a \\[sources\\]"):
        parse_cpus({**base, "cpus": [{**entry, "source": "nowhere"}]})
    with pytest.raises(CpuFileError, match="unknown feature"):
        parse_cpus({**base, "cpus": [{**entry, "features": ["avx512"]}]})
    with pytest.raises(CpuFileError, match="twice"):
        parse_cpus({**base, "cpus": [entry, entry]})
    assert cpu_file.nearest("graviton", list(cpus()))
