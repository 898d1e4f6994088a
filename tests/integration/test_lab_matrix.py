"""The whole lab matrix, as `make demo` runs it: every row ready on amd64 (native) and
arm64 (emulated), through the real engine. One run; one test result per cell."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest

from ecoready.domain.model import Report
from ecoready.judge.diff import diff, diff_lines
from ecoready.matrix.load import load
from ecoready.report import html, junit, markdown
from ecoready.report.load import parse_report
from ecoready.report.parity_words import PARITY_MARK, cell_finding, differing_parts
from ecoready.report.status_words import cell_text
from ecoready.report.text_grid import render_summary
from ecoready.report.verdict import arch_verdicts
from ecoready.ui.tui.detail import detail_renderable, plain
from tests.support.cli import LAB_MATRIX
from tests.support.matrices import EXPECTED

pytestmark = pytest.mark.docker

CELLS = [f"{c.id}/{arch}" for c in load(LAB_MATRIX).components for arch in ("amd64", "arm64")]


@pytest.mark.parametrize("cell_id", CELLS)
def test_lab_cell_gets_its_verdict(lab_report: dict[str, Any], cell_id: str) -> None:
    cells = {c["id"]: c for c in lab_report["cells"]}
    cell = cells[cell_id]
    failing = [
        f"{s['stage']}:{k['name']}: {k['detail']}"
        for s in cell["stages"]
        for k in s["checks"]
        if k["outcome"] != "pass"
    ]
    expected = EXPECTED.get(cell_id, "ready")
    assert cell["status"] == expected, (cell["status"], cell["detail"], failing, cell["log_tail"][-5:])
    assert cell["emulated"] is (cell["arch"] == "arm64")
    if expected != "ready":
        # judged without starting anything: by the image, or by its programs (the build audit);
        # or it started and stopped at once for what the user must give (a licence key)
        judged = ["image", "audit"] if cell_id.startswith("gap-binary-mislabelled") else ["image"]
        if cell_id.startswith("licensed/"):  # its start stopped at once, asking for the key
            judged = ["image", "start"]
            assert cell["stages"][-1]["blame"]["cause"] == "needs-licence" and cell["stages"][-1]["blame"]["fix"]
        assert [s["stage"] for s in cell["stages"]] == judged
        return
    smoke = next(s for s in cell["stages"] if s["stage"] == "smoke")
    assert smoke["checks"], "every lab probe reports named checks"
    # driver rows against MariaDB: tls and caching_sha2_password do not apply (MySQL only)
    assert all(
        k["outcome"] == "pass" or (k["outcome"] == "skip" and k["detail"].startswith("not applicable"))
        for k in smoke["checks"]
    )


def test_the_whole_run_gets_the_expected_grid(lab_report: dict[str, Any]) -> None:
    assert lab_report["_exit"] == 1, lab_report["_stderr"][-3000:]  # some cells are not ready, on purpose
    counts: dict[str, int] = {}
    for cell_id in CELLS:
        status = EXPECTED.get(cell_id, "ready")
        counts[status] = counts.get(status, 0) + 1
    assert lab_report["summary"] == dict(sorted(counts.items()))


# -- parity: the same tag on both arches is the same software, but for the parity gap -------
PARITY_GAP = "gap-parity"


def loaded(lab_report: dict[str, Any]) -> Report:
    return parse_report(json.dumps({k: v for k, v in lab_report.items() if not k.startswith("_")}), "lab")


def test_the_parity_gap_is_ready_and_differs_in_every_view(lab_report: dict[str, Any]) -> None:
    cells = {c["id"]: c for c in lab_report["cells"]}
    amd, arm = cells[f"{PARITY_GAP}/amd64"], cells[f"{PARITY_GAP}/arm64"]
    assert amd["status"] == arm["status"] == "ready"
    assert amd["parity"] is None  # the reference
    found = arm["parity"]
    assert found["reference"] == "amd64" and found["compared"] > 500
    assert found["counts"]["version"] == 1 and found["counts"]["packages"] > 0
    versions = next(d for d in found["differences"] if d["facet"] == "version")
    assert versions["reference"].startswith("11.8.") and versions["other"].startswith("10.11.")
    assert {"facet": "plugins", "name": "online_alter_log", "reference": "ACTIVE", "other": None} in found[
        "differences"
    ]
    assert any(d["facet"] == "packages" and d["name"] == "mariadb-server" for d in found["differences"])
    report = loaded(lab_report)
    cell = report.cells[f"{PARITY_GAP}/arm64"]
    said = cell_finding(cell)
    assert said.startswith("arm64 differs from amd64: version 11.8.") and "no `online_alter_log` plugin" in said
    assert markdown.md(said) in markdown.render(report) and html.esc(said) in html.render(report)  # escaped
    xml = junit.render(report)
    assert 'name="parity"' in xml and f"{cell.parity.compared if cell.parity else 0} things compared with amd64" in xml
    assert cell_text(cell, 80).endswith(PARITY_MARK) and PARITY_MARK in render_summary(report)
    assert any(
        line.startswith("arm64 parity: 1 component differs from amd64: gap-parity (") for line in arch_verdicts(report)
    )
    assert cell.parity is not None
    shown = plain(detail_renderable(cell, 400), 400)  # a facet a line, whole
    assert all(part in shown for part in differing_parts("arm64", cell.parity)) and "mariadb-server" in shown
    no_parity = replace(report, cells={k: replace(c, parity=None) for k, c in report.cells.items()})
    assert f"parity {PARITY_GAP}/arm64: now {said}" in diff_lines(diff(no_parity, report))


def test_no_other_lab_row_differs_across_arches(lab_report: dict[str, Any]) -> None:
    cells = lab_report["cells"]
    compared = {c["component"] for c in cells if c["parity"] is not None}
    assert {"mariadb-10.11", "mariadb-11.8", "mysql-9.7", "gap-parity"} <= compared  # the server rows
    differing = {
        c["id"]: c["parity"]["differences"][:5]
        for c in cells
        if c["parity"] and (c["parity"]["counts"] or c["parity"]["unknown"]) and c["component"] != PARITY_GAP
    }
    assert differing == {}
    assert all(c["parity"]["compared"] > 0 for c in cells if c["parity"] is not None)
    (note,) = [n["text"] for n in lab_report["notes"] if n["text"].startswith("parity: things compared")]
    named = re.findall(r"([\w.-]+) \d+(?:,|$| and)", note.split(": ", 1)[1])
    more = re.search(r" and (\d+) more$", note)
    assert set(named) <= compared and len(named) + (int(more.group(1)) if more else 0) == len(compared), note
