"""The whole lab matrix, as `make demo` runs it: every row ready on amd64 (native) and
arm64 (emulated), through the real engine. One run; one test result per cell."""

from __future__ import annotations

from typing import Any

import pytest

from ecoready.matrix.load import load
from tests.support.cli import LAB_MATRIX

pytestmark = pytest.mark.docker

CELLS = [f"{c.id}/{arch}" for c in load(LAB_MATRIX).components for arch in ("amd64", "arm64")]
# The lab's deliberate availability gaps (app/lab/gaps.py); every other cell must be ready.
EXPECTED = {
    "gap-amd64-only/arm64": "missing",
    "gap-arm64-only/amd64": "missing",
    "gap-mislabelled/arm64": "broken",
    "gap-binary-mislabelled/arm64": "broken",  # caught by the build audit
    # an image that stops asking for a licence key: what to provide, never broken (issue 58)
    "licensed/amd64": "locked",
    "licensed/arm64": "locked",
}


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
