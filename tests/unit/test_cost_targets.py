"""The cost view with hosts given by instance (`report --merge` of two runs): an instance
whose CPU cannot run the images is flagged and never offered for its numbers; the run
answers each audit for its hosts' instances as well as for the matrix's targets."""

from __future__ import annotations

from dataclasses import replace

from ecoready.audit.targets import program_fits
from ecoready.domain.cpus import Target
from ecoready.domain.model import AuditResult, BinaryAudit, HostFacts, Profile, Report
from ecoready.matrix.load import parse
from ecoready.plan.cells import Plan
from ecoready.report import json as json_report
from ecoready.report.load import parse_report
from ecoready.report.merge import merge
from ecoready.report.samecost import headline, same_cost
from ecoready.run.audit_stage import audit_targets
from tests.support.reports_sample import bench_report

ARM, X86 = "gcp:c4a-standard-4", "gcp:n2d-standard-4"  # Google Axion (Neoverse V2), AMD Zen 3 (Milan)
ARM_BUILD = BinaryAudit("mariadbd", "/usr/sbin/mariadbd", "arm64", 1, 65536, lse="outline", lse_count=3)


def x86_build(level: str) -> BinaryAudit:
    return BinaryAudit("mariadbd", "/usr/sbin/mariadbd", "amd64", 1, 4096, x86_needs=level, x86_uses=level)


def one_run(arch: str, host: HostFacts, binary: BinaryAudit, run_id: str) -> Report:
    """A run of one arch on one host given by instance, its cell audited as the run does."""
    base = bench_report()
    (cell,) = [c for c in base.cells.values() if c.component == "mariadb-10.11" and c.arch == arch]
    targets = audit_targets(Plan(parse(ROW), Profile.QUICK, (arch,), (), (host,)))
    audit = AuditResult(arch, "sha256:" + "d" * 64, (binary,), targets=program_fits([binary], targets))
    cell = replace(cell, host=host.name, audit=audit)
    return replace(base, run_id=run_id, hosts=(host,), arches=(arch,), cells={cell.id: cell})


ROW = '[[components]]\nid = "db"\ncategory = "server"\nprobe = "server"\nimage = "x/db:1"\n'


def merged(x86_level: str) -> Report:
    arm = HostFacts("arm", "arm64", (), {}, "20.10", "1.41", 4, 16 << 30, "6.1", price_per_hour=0.17, cpu_ghz=3.0,
                    vcpus=4, instance=ARM)  # fmt: skip
    x86 = HostFacts("x86", "amd64", (), {}, "20.10", "1.41", 4, 16 << 30, "6.1", price_per_hour=0.19, cpu_ghz=2.8,
                    vcpus=4, instance=X86)  # fmt: skip
    parts = [("arm.json", one_run("arm64", arm, ARM_BUILD, "1" * 32)),
             ("x86.json", one_run("amd64", x86, x86_build(x86_level), "2" * 32))]  # fmt: skip
    # through JSON, as `report --merge` reads saved reports
    return merge([(name, parse_report(json_report.render(r))) for name, r in parts])


def test_each_audit_is_answered_for_the_hosts_instances() -> None:
    host = HostFacts("x86", "amd64", instance=X86)
    matrix = parse('targets = ["rpi4", "gcp:n2d-standard-4"]\n' + ROW)
    plan = Plan(matrix, Profile.QUICK, ("amd64",), (), (host, HostFacts("plain", "amd64")))
    assert audit_targets(plan) == (Target("rpi4", "rpi4"), Target(X86, "zen3"))
    plan = replace(plan, matrix=parse(ROW))
    assert audit_targets(plan) == (Target(X86, "zen3"),)


def test_an_instance_the_images_cannot_run_on_is_flagged_and_not_offered() -> None:
    (view,) = same_cost(merged("x86-64-v4"))  # AVX-512: Zen 3 lacks it
    assert view.amd64_cannot == ("mariadbd of mariadb-10.11 (needs x86-64-v4)",)
    assert view.arm64_cannot == ()
    assert view.lines == ()  # its numbers are not set against the other host's
    said = headline(view)
    assert f"Not a choice: {X86} cannot run mariadbd of mariadb-10.11 (needs x86-64-v4)." in said
    assert "costs" not in said.split("Not a choice")[-1]


def test_instances_that_run_the_images_are_compared() -> None:
    (view,) = same_cost(merged("x86-64-v3"))
    assert view.amd64_cannot == view.arm64_cannot == ()
    assert view.lines and "Not a choice" not in headline(view)
    assert "The arm64 host costs" in headline(view)
