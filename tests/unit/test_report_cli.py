"""`ecoready report`: re-render a saved report, merge the reports of two native runners."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

from ecoready.domain.model import Report
from ecoready.report import json as json_report
from ecoready.report.load import load_report
from ecoready.report.merge import merge
from tests.support.cli import ecoready
from tests.support.reports_sample import DATA, EXPECTED, bench_report, lab_report


def split_by_arch(report: Report, arch: str, host: str) -> Report:
    """The part of `report` one native runner of `arch` would have produced."""
    (facts,) = report.hosts
    own = replace(facts, name=host if host else facts.name, native_arch=arch, emulated_arches=(), emulators={})
    cells = {k: replace(c, emulated=False, host=own.name) for k, c in report.cells.items() if c.arch == arch}
    return replace(report, arches=(arch,), hosts=(own,), cells=cells, run_id=("1" if arch == "amd64" else "2") * 32)


def test_report_rerenders_every_format_from_a_saved_report(tmp_path: Path) -> None:
    out = {ext: tmp_path / f"r.{ext}" for ext in ("json", "md", "html", "xml")}
    result = ecoready(
        "report",
        str(DATA / "lab-mixed.json"),
        "--json",
        str(out["json"]),
        "--md",
        str(out["md"]),
        "--html",
        str(out["html"]),
        "--junit",
        str(out["xml"]),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert out["json"].read_text() == json_report.render(load_report(DATA / "lab-mixed.json"))
    for ext in ("md", "html", "xml"):
        assert out[ext].read_text() == (EXPECTED / f"lab-mixed.{ext}").read_text()


def test_report_without_outputs_prints_the_grid_and_one_stdout_at_most(tmp_path: Path) -> None:
    result = ecoready("report", str(DATA / "lab-run.json"))
    seconds = load_report(DATA / "lab-run.json").cells["mariadb-10.11/amd64"].seconds
    assert result.returncode == 0 and f"mariadb-10.11  ✔ ready {seconds:.1f}s" in result.stdout
    md = ecoready("report", str(DATA / "lab-run.json"), "--md", "-")
    assert md.stdout == (EXPECTED / "lab-run.md").read_text()
    both = ecoready("report", str(DATA / "lab-run.json"), "--md", "-", "--html", "-")
    assert both.returncode == 2 and "only one report can go to stdout" in both.stderr


def test_merging_two_native_runners(tmp_path: Path) -> None:
    mixed = lab_report("lab-mixed")
    amd = split_by_arch(mixed, "amd64", "")
    arm = split_by_arch(mixed, "arm64", "")
    merged = merge([("amd.json", amd), ("arm.json", arm)])
    assert set(merged.cells) == set(mixed.cells) and merged.arches == ("amd64", "arm64")
    # both runners called their host "local": each is renamed after its arch, its cells follow
    assert [h.name for h in merged.hosts] == ["local-amd64", "local-arm64"]
    assert {c.host for c in merged.cells.values() if c.arch == "arm64"} == {"local-arm64"}
    assert {c.host for c in merged.cells.values() if c.arch == "amd64"} == {"local-amd64"}
    assert not any(c.emulated for c in merged.cells.values())
    assert merged.notes[-1].text == "merged from amd.json (run 11111111); arm.json (run 22222222)"
    assert len(merged.run_id) == 32 and merged.run_id != amd.run_id


def test_a_native_cell_wins_over_an_emulated_one() -> None:
    report = bench_report()
    native_arm = replace(report, cells={k: c for k, c in report.cells.items() if k == "mariadb-10.11/arm64"})
    emulated_arm = replace(
        report,
        run_id="e" * 32,
        cells={"mariadb-10.11/arm64": replace(report.cells["mariadb-10.11/arm64"], emulated=True, host="x86")},
    )
    merged = merge([("emulated.json", emulated_arm), ("native.json", native_arm)])
    assert merged.cells["mariadb-10.11/arm64"].emulated is False
    assert any("kept the one from native.json, not emulated.json" in n.text for n in merged.notes)


def test_cli_merge(tmp_path: Path) -> None:
    mixed = lab_report("lab-mixed")
    a, b = tmp_path / "amd64.json", tmp_path / "arm64.json"
    a.write_text(json_report.render(split_by_arch(mixed, "amd64", "runner-x86")))
    b.write_text(json_report.render(split_by_arch(mixed, "arm64", "runner-arm")))
    refused = ecoready("report", str(a), str(b), "--json", str(tmp_path / "m.json"))
    assert refused.returncode == 2 and "--merge" in refused.stderr
    result = ecoready(
        "report", "--merge", str(a), str(b), "--json", str(tmp_path / "m.json"), "--junit", str(tmp_path / "m.xml")
    )
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "m.json").read_text())
    assert [h["name"] for h in data["hosts"]] == ["runner-x86", "runner-arm"]
    assert data["summary"] == {"broken": 1, "missing": 2, "partial": 2, "ready": 2}
    assert len(ET.parse(tmp_path / "m.xml").getroot().findall("testsuite/testcase")) == 7
