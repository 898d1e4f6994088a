"""The price file shipped with ecoready (app/matrix/prices.toml): every instance carries its
sizes, clock and price with the pages they came from and their dates; each provider has
arm64/amd64 pairs of one size; a pair of it goes through the same-cost view as a host's
`instance = "..."` does; and a report says when the file's dates are older than 6 months."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

import pytest

from ecoready.domain.cpus import cpus
from ecoready.domain.model import HostFacts, Profile, Report
from ecoready.matrix.load import parse
from ecoready.matrix.prices import Instance, instances, parse_prices
from ecoready.report.cost import price_notes, stale
from ecoready.report.samecost import headline, same_cost_hosts
from ecoready.run.hosts import cost_facts

WRITTEN = "2026-11-27"  # the day the file's figures were copied from their pages


# No public page of Google's gives a clock for its Axion processor, and Azure's pages give only
# a maximum boost for the AMD processors of Dasv5 and Dasv6, no all-core clock (the file's
# header says so): those entries carry no cpu_ghz rather than an estimated one.
WITHOUT_CLOCK = ("gcp:c4a-", *(f"azure:Standard_D{size}as_v" for size in (2, 4, 8, 16)))


def test_every_instance_has_its_figures_a_page_and_a_date() -> None:
    assert len(instances()) >= 80
    for entry in instances().values():
        assert entry.arch in ("arm64", "amd64") and entry.cpu, entry
        assert entry.vcpus > 0 and entry.memory_gib > 0, entry
        if entry.name.startswith(WITHOUT_CLOCK):
            assert entry.cpu_ghz is None, entry
        else:
            assert entry.cpu_ghz is not None and 1.0 < entry.cpu_ghz < 6.0, entry
        assert entry.price_per_hour > 0 and entry.region, entry
        for page, when in ((entry.source, entry.date), (entry.spec_source, entry.spec_date)):
            assert page.startswith("https://"), entry
            assert date.fromisoformat(when) <= date.fromisoformat(WRITTEN), entry


TARGETS_READ = "2026-12-02"  # the day each instance's CPU (target) was added from its page


def cpu_problems(entries: Iterable[Instance]) -> list[str]:
    """What is wrong with the CPU each instance names (none, unknown, of another arch, unsourced)."""
    known = cpus()
    problems = []
    for entry in entries:
        cpu = known.get(entry.target)
        if cpu is None:
            problems.append(f"{entry.name}: its CPU {entry.target or '(none)'} is not a target CPU")
        elif cpu.arch != entry.arch:
            problems.append(f"{entry.name}: its CPU {cpu.id} is {cpu.arch}")
        elif not entry.target_source.startswith("https://") or entry.target_date > TARGETS_READ:
            problems.append(f"{entry.name}: no page or date for its CPU")
    return problems


def test_every_instance_names_a_known_cpu_of_its_arch_with_a_page_and_a_date() -> None:
    assert cpu_problems(instances().values()) == []


def test_an_instance_without_a_cpu_or_with_an_unknown_one_is_caught() -> None:
    sources = {"p": {"url": "https://example.com", "date": "2026-01-01"}}
    base = {"name": "x:none", "arch": "arm64", "vcpus": 2, "memory_gib": 8, "price_per_hour": 0.1, "region": "r",
            "source": "p", "spec_source": "p", "target_source": "p"}  # fmt: skip
    items = [base, {**base, "name": "x:unknown", "target": "graviton9"}, {**base, "name": "x:x86", "target": "zen4"}]
    found = cpu_problems(parse_prices({"sources": sources, "instances": items}).values())
    assert [p.split(":")[1] for p in found] == ["none", "unknown", "x86"]


def test_the_dates_were_current_when_the_file_was_written() -> None:
    """Older than 6 months on the day it was written would be a stale file shipped."""
    assert not any(stale(entry.date, WRITTEN) for entry in instances().values())


def pairs() -> dict[str, set[tuple[str, str]]]:
    """Per provider, the (arm64, amd64) names of one vCPU count and one region."""
    found: dict[str, set[tuple[str, str]]] = {}
    every = list(instances().values())
    for arm in (e for e in every if e.arch == "arm64"):
        provider = arm.name.split(":")[0]
        for x86 in (e for e in every if e.arch == "amd64" and e.name.split(":")[0] == provider):
            if (x86.vcpus, x86.region) == (arm.vcpus, arm.region):
                found.setdefault(provider, set()).add((arm.name, x86.name))
    return found


def test_every_provider_of_the_file_has_an_arm64_amd64_pair() -> None:
    found = pairs()
    providers = {name.split(":")[0] for name in instances()}
    assert providers == set(found) and {"aws", "azure", "gcp"} <= providers
    assert {("aws:m8g.2xlarge", "aws:m7i.2xlarge"), ("aws:m8g.2xlarge", "aws:m7a.2xlarge")} <= found["aws"]
    assert {("aws:c7g.large", "aws:c7i.large"), ("aws:r8g.4xlarge", "aws:r7a.4xlarge")} <= found["aws"]
    assert ("azure:Standard_D4ps_v6", "azure:Standard_D4s_v5") in found["azure"]
    for size in (4, 8, 16):  # Ampere Altra and Cobalt 100 against Intel and AMD
        for arm, x86 in (("ps_v5", "as_v5"), ("ps_v5", "s_v6"), ("ps_v6", "as_v6"), ("ps_v6", "s_v6")):
            assert (f"azure:Standard_D{size}{arm}", f"azure:Standard_D{size}{x86}") in found["azure"]
    assert ("azure:Standard_D2ps_v5", "azure:Standard_D2as_v6") in found["azure"]
    # Standard_D2as_v5's price does not fit its series (the file's header): left out, not trusted.
    assert "azure:Standard_D2as_v5" not in instances()
    for size in (4, 8):
        for arm, x86 in (("c4a", "n2"), ("c4a", "c3"), ("t2a", "n2d"), ("t2a", "c3d"), ("c4a", "n4")):
            assert (f"gcp:{arm}-standard-{size}", f"gcp:{x86}-standard-{size}") in found["gcp"]
    sixteen = {("gcp:t2a-standard-16", "gcp:n2d-standard-16"), ("gcp:c4a-standard-16", "gcp:c3d-standard-16")}
    assert sixteen <= found["gcp"] and ("gcp:c4a-standard-2", "gcp:n4-standard-2") in found["gcp"]


def test_known_figures_of_the_file() -> None:
    """Spot checks against the pages (see the file's [sources])."""
    m8g, m7i = instances()["aws:m8g.2xlarge"], instances()["aws:m7i.2xlarge"]
    assert (m8g.vcpus, m8g.cpu_ghz, m8g.memory_gib, m8g.price_per_hour) == (8, 2.8, 32.0, 0.35904)
    assert (m7i.vcpus, m7i.cpu_ghz, m7i.memory_gib, m7i.price_per_hour) == (8, 3.2, 32.0, 0.4032)
    assert (m8g.cpu, m8g.region, m8g.date) == ("AWS Graviton4", "us-east-1", "2026-07-20")
    cobalt = instances()["azure:Standard_D4ps_v6"]
    assert (cobalt.vcpus, cobalt.cpu_ghz, cobalt.memory_gib, cobalt.price_per_hour) == (4, 3.4, 16.0, 0.14)
    assert (cobalt.region, cobalt.date) == ("eastus", "2026-06-18")
    altra, emerald = instances()["azure:Standard_D8ps_v5"], instances()["azure:Standard_D4s_v6"]
    assert (altra.vcpus, altra.cpu_ghz, altra.memory_gib, altra.price_per_hour) == (8, 3.0, 32.0, 0.308)
    assert (emerald.vcpus, emerald.cpu_ghz, emerald.memory_gib, emerald.price_per_hour) == (4, 3.0, 16.0, 0.202)
    milan, genoa = instances()["azure:Standard_D16as_v5"], instances()["azure:Standard_D2as_v6"]
    assert (milan.vcpus, milan.cpu_ghz, milan.memory_gib, milan.price_per_hour) == (16, None, 64.0, 0.688)
    assert (genoa.vcpus, genoa.cpu_ghz, genoa.memory_gib, genoa.price_per_hour) == (2, None, 8.0, 0.0908)
    assert (altra.cpu, milan.region, genoa.date) == ("Ampere Altra", "eastus", "2026-06-18")
    assert altra.spec_source.endswith("/dpsv5-series") and emerald.spec_source.endswith("/dsv6-series")
    # Google Cloud: pricing.yml's us-central1 `hour`, clocks from Google's pages.
    axion, ampere = instances()["gcp:c4a-standard-4"], instances()["gcp:t2a-standard-8"]
    assert (axion.vcpus, axion.cpu_ghz, axion.memory_gib, axion.price_per_hour) == (4, None, 16.0, 0.1796)
    assert (ampere.vcpus, ampere.cpu_ghz, ampere.memory_gib, ampere.price_per_hour) == (8, 3.0, 32.0, 0.308)
    n2, n2d, c3 = instances()["gcp:n2-standard-4"], instances()["gcp:n2d-standard-8"], instances()["gcp:c3-standard-8"]
    assert (n2.vcpus, n2.cpu_ghz, n2.memory_gib, n2.price_per_hour) == (4, 3.4, 16.0, 0.194236)
    assert (n2d.vcpus, n2d.cpu_ghz, n2d.price_per_hour) == (8, 2.8, 0.337968)
    assert (c3.vcpus, c3.cpu_ghz, c3.price_per_hour) == (8, 3.0, 0.403216)
    assert (axion.region, axion.date, n2.spec_date) == ("us-central1", "2026-08-20", "2026-04-10")
    assert "Cyclenerd/google-cloud-pricing-cost-calculator" in axion.source and "cpu-platforms" in n2.spec_source


PAIR = """
[[hosts]]
name = "graviton"
docker = "ssh://ops@graviton-box"
instance = "aws:m8g.2xlarge"

[[hosts]]
name = "xeon"
docker = "ssh://ops@xeon-box"
instance = "aws:m7i.2xlarge"

[[components]]
id = "db"
category = "server"
probe = "server"
image = "x/db:1"
"""


def pair_facts(matrix: str = PAIR) -> tuple[HostFacts, HostFacts]:
    arm, x86 = parse(matrix, "m.toml").hosts
    return (
        HostFacts(arm.name, "arm64", serves=("arm64",), **cost_facts(arm)),
        HostFacts(x86.name, "amd64", serves=("amd64",), **cost_facts(x86)),
    )


def test_a_pair_of_the_file_in_the_same_cost_view() -> None:
    arm, x86 = pair_facts()
    view = same_cost_hosts(arm, x86)
    assert view.unit == "hour"
    assert view.arm64.compute_ghz == pytest.approx(8 * 2.8) and view.amd64.compute_ghz == pytest.approx(8 * 3.2)
    assert view.saving_percent == pytest.approx((0.4032 - 0.35904) / 0.4032 * 100)  # about 11% less
    said = headline(view)
    assert "amd64 host xeon" in said and "8 vCPU at 3.2 GHz" in said
    assert "arm64 host graviton" in said and "8 vCPU at 2.8 GHz" in said
    assert "(25.6 vs 22.4 GHz)" in said and said.endswith("The arm64 host costs 11% less.")


def gcp_pair(arm: str, x86: str, arm_extra: str = "") -> tuple[HostFacts, HostFacts]:
    """PAIR with Google Cloud instances (and what the arm64 host gives itself)."""
    matrix = PAIR.replace('"aws:m8g.2xlarge"', f'"{arm}"{arm_extra}').replace('"aws:m7i.2xlarge"', f'"{x86}"')
    return pair_facts(matrix)


def test_a_google_cloud_pair_in_the_same_cost_view() -> None:
    view = same_cost_hosts(*gcp_pair("gcp:t2a-standard-8", "gcp:n2d-standard-8"))
    assert view.arm64.compute_ghz == pytest.approx(8 * 3.0) and view.amd64.compute_ghz == pytest.approx(8 * 2.8)
    assert view.saving_percent == pytest.approx((0.337968 - 0.308) / 0.337968 * 100)  # about 9% less
    said = headline(view)
    assert "(gcp:n2d-standard-8): 8 vCPU at 2.8 GHz" in said and "(gcp:t2a-standard-8): 8 vCPU at 3 GHz" in said
    assert "(22.4 vs 24 GHz)" in said and said.endswith("The arm64 host costs 9% less.")


def test_an_axion_pair_has_prices_but_no_clock_until_the_host_gives_one() -> None:
    """C4A has no clock on Google's pages: no compute power is made up, the price still compares."""
    view = same_cost_hosts(*gcp_pair("gcp:c4a-standard-4", "gcp:c3-standard-4"))
    assert view.arm64.cpu_ghz is None and view.arm64.compute_ghz is None and view.power_ratio is None
    assert view.amd64.compute_ghz == pytest.approx(4 * 3.0)
    assert view.saving_percent == pytest.approx((0.201608 - 0.1796) / 0.201608 * 100)  # about 11% less
    said = headline(view)
    assert "(gcp:c4a-standard-4): 4 vCPU for 0.1796 USD" in said
    assert "give host graviton its cpu_ghz (gcp:c4a-standard-4's provider publishes no sustained clock)" in said
    measured = same_cost_hosts(*gcp_pair("gcp:c4a-standard-4", "gcp:c3-standard-4", "\ncpu_ghz = 2.6"))
    assert measured.arm64.compute_ghz == pytest.approx(4 * 2.6)  # the host's own clock, not the file's


def test_an_azure_ampere_pair_in_the_same_cost_view() -> None:
    view = same_cost_hosts(*gcp_pair("azure:Standard_D8ps_v5", "azure:Standard_D8s_v6"))
    assert view.arm64.compute_ghz == pytest.approx(8 * 3.0) and view.amd64.compute_ghz == pytest.approx(8 * 3.0)
    assert view.saving_percent == pytest.approx((0.403 - 0.308) / 0.403 * 100)  # about 24% less
    said = headline(view)
    assert "(azure:Standard_D8s_v6): 8 vCPU at 3 GHz" in said and "(azure:Standard_D8ps_v5): 8 vCPU at 3 GHz" in said
    assert "(24 vs 24 GHz)" in said and said.endswith("The arm64 host costs 24% less.")


def test_an_azure_amd_pair_compares_prices_and_waits_for_the_amd_clock() -> None:
    """Dasv5 has only a maximum boost on Azure's page: no compute power until the host gives one."""
    view = same_cost_hosts(*gcp_pair("azure:Standard_D4ps_v5", "azure:Standard_D4as_v5"))
    assert view.amd64.cpu_ghz is None and view.amd64.compute_ghz is None and view.power_ratio is None
    assert view.arm64.compute_ghz == pytest.approx(4 * 3.0)
    assert view.saving_percent == pytest.approx((0.172 - 0.154) / 0.172 * 100)  # about 10% less
    assert headline(view).endswith("The arm64 host costs 10% less.")
    cobalt = same_cost_hosts(*gcp_pair("azure:Standard_D16ps_v6", "azure:Standard_D16as_v6"))
    assert cobalt.saving_percent == pytest.approx((0.726 - 0.562) / 0.726 * 100)  # about 23% less


def report_on(started_at: str) -> Report:
    return Report(1, "a" * 32, "0", "m", Profile.QUICK, started_at, hosts=pair_facts())


def test_the_report_names_the_page_and_date_and_says_when_old() -> None:
    now = report_on(f"{WRITTEN}T10:00:00.000Z")
    notes = price_notes(now)
    assert len(notes) == 2 and all("2026-07-20" in n and "karpenter-provider-aws" in n for n in notes)
    assert not any("older than 6 months" in n for n in notes)
    later = price_notes(report_on("2027-02-01T10:00:00.000Z"))  # the AWS figures are 196 days old then
    assert all("older than 6 months: check the provider's page" in n for n in later)
