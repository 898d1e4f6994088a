"""The build audit per target, worded (app/report/targets.py): one line per program, a
series said as "X and later", a host named by its CPU's part."""

from __future__ import annotations

from dataclasses import replace

from rich.console import Console

from ecoready.audit.targets import program_fits
from ecoready.domain.cpus import Target
from ecoready.domain.model import BinaryAudit, Report
from ecoready.report import html, markdown
from ecoready.report import json as json_report
from ecoready.report.load import parse_report
from ecoready.report.plan_text import render_plan
from ecoready.report.targets import cell_target_lines, cpu_named, program_line
from ecoready.ui.tui.detail import audit_section
from tests.support.reports_sample import lab_report

LSE = BinaryAudit("mariadbd", "/usr/sbin/mariadbd", "arm64", 1, 65536, lse="inline", lse_count=4)
TARGETS = [Target(t, t) for t in ("graviton1", "graviton2", "graviton3", "graviton4", "rpi4")]


def line(binary: BinaryAudit, targets: list[Target]) -> str:
    (program,) = program_fits([binary], targets)
    return program_line(program)


def test_a_series_is_said_from_its_first_fine_generation_on() -> None:
    assert line(LSE, TARGETS) == (
        "mariadbd: fine on AWS Graviton2 and later; not on AWS Graviton1 / Raspberry Pi 4 (needs LSE)"
    )


def test_instances_are_named_with_their_cpu_and_reasons_are_said() -> None:
    outline = replace(LSE, lse="outline", load_align=4096)
    targets = [Target("aws:m6g.large", "graviton2"), Target("rpi4", "rpi4"), Target("rpi5", "rpi5")]
    assert line(outline, targets) == (
        "mariadbd: runs on aws:m6g.large (AWS Graviton2) (not on kernels with 64 KiB pages); "
        "slower on Raspberry Pi 4 (atomics fall back to exclusive loops: no LSE); "
        "not on Raspberry Pi 5 (segments too finely aligned for its 16 KiB pages)"
    )


def test_an_x86_level_is_said_as_needed() -> None:
    v3 = BinaryAudit("mysqld", "/usr/sbin/mysqld", "amd64", 1, 4096, x86_needs="x86-64-v3", x86_uses="x86-64-v3")
    targets = [Target(t, t) for t in ("sandybridge", "haswell", "zen4")]
    fine = "mysqld: fine on Intel Haswell / Broadwell, AMD Zen 4 (EPYC Genoa); "
    assert line(v3, targets) == fine + "not on Intel Sandy Bridge / Ivy Bridge (needs x86-64-v3)"


def test_a_host_is_named_by_its_part() -> None:
    assert cpu_named("0x41:0xd0c") == "Neoverse N1, AWS Graviton2 / Ampere Altra class"
    assert cpu_named("GenuineIntel:6:0x55") == "Skylake-SP, Intel Skylake-SP / Cascade Lake class"
    assert cpu_named("AuthenticAMD:25:0x11") == "Zen 4, AMD Zen 4 (EPYC Genoa) class"
    assert cpu_named("0x41:0x999") == cpu_named("") == cpu_named("x:y:z") == ""


def with_targets(report: Report, targets: list[Target]) -> Report:
    """The recorded audit report as a run of a matrix naming `targets` makes it."""
    cells = {
        cid: replace(c, audit=replace(c.audit, targets=program_fits(c.audit.binaries, targets))) if c.audit else c
        for cid, c in report.cells.items()
    }
    return replace(report, targets=tuple(targets), cells=cells)


def test_every_view_shows_one_line_per_program_on_the_targets() -> None:
    targets = [Target("aws:m6g.large", "graviton2"), Target("rpi4", "rpi4"), Target("sandybridge", "sandybridge")]
    report = with_targets(lab_report("lab-audit"), targets)
    mariadbd = (
        "mariadbd: fine on aws:m6g.large (AWS Graviton2); "
        "slower on Raspberry Pi 4 (atomics fall back to exclusive loops: no LSE; no PMULL: checksums without folding)"
    )
    cell = report.cells["mariadb-10.11/arm64"]
    assert cell_target_lines(cell) == [mariadbd]
    assert "  - on targets: " + mariadbd in markdown.render(report).splitlines()
    assert f"<li>on targets: {mariadbd}</li>" in html.render(report)
    assert "- mariadb-10.11 (arm64): " + mariadbd in markdown.migration(report)  # `plan --format md`
    plan = render_plan(report, 400)
    assert "On the target CPUs the matrix names:" in plan and f"  - mariadb-10.11 (arm64): {mariadbd}" in plan
    detail = Console(width=400, record=True)
    detail.print(audit_section(cell))
    assert f"on targets: {mariadbd}" in detail.export_text()
    # without targets in the matrix, nothing is said
    plain = lab_report("lab-audit")
    assert "on targets" not in markdown.render(plain) and "target CPUs" not in render_plan(plain, 200)


def test_the_targets_survive_the_json_report() -> None:
    report = with_targets(lab_report("lab-audit"), [Target("rpi4", "rpi4")])
    again = parse_report(json_report.render(report))
    assert again.targets == report.targets
    assert again.cells["mariadb-10.11/arm64"].audit == report.cells["mariadb-10.11/arm64"].audit


def test_and_later_is_said_only_up_to_the_newest_generation_of_the_file() -> None:
    targets = [Target(t, t) for t in ("graviton2", "graviton3")]  # Graviton4 not asked: not "and later"
    assert line(LSE, targets) == "mariadbd: fine on AWS Graviton2, AWS Graviton3"
    dispatching = BinaryAudit("mariadbd", "/m", "amd64", 1, 4096, x86_needs="x86-64", x86_uses="x86-64-v4")
    targets = [Target(t, t) for t in ("sandybridge", "haswell", "zen4")]
    assert line(dispatching, targets) == (
        "mariadbd: fine on AMD Zen 4 (EPYC Genoa); "
        "runs on Intel Sandy Bridge / Ivy Bridge, Intel Haswell / Broadwell (a few x86-64-v4 paths)"
    )


def test_the_platform_table_names_the_core_of_a_known_part() -> None:
    from ecoready.domain.model import PlatformFitness
    from ecoready.report.exporter_text import platform_row

    amd = PlatformFitness(
        "local", "amd64", False, machine="x86_64", cpu_model="AMD EPYC", cpu_part="AuthenticAMD:0x1a:0x2"
    )
    assert platform_row(amd)[2] == "AMD EPYC (Zen 5)"
    assert platform_row(replace(amd, cpu_part=""))[2] == "AMD EPYC"
    graviton = PlatformFitness(
        "g", "arm64", False, machine="aarch64", cpu_model="ARM Neoverse-N1", cpu_part="0x41:0xd0c"
    )
    assert platform_row(graviton)[2] == "ARM Neoverse-N1"  # lscpu's name says the core already
    assert platform_row(replace(graviton, cpu_model="", cpu_part="0x61:0x023"))[2] == "Apple M1"
