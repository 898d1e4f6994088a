"""An image that will not start without a licence key (the lab's `lab/licensed:1`,
containers/licensed/): its cells end `locked`, blamed on what the user has not given
(`needs-licence`, with what to provide), never `broken` nor ecoready's `error`; the run
exits 1 (not ready), and the way out the remedy names works: given the key, it serves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ecoready.probe_api.licences import LICENCE_ASKS
from tests.support.cli import docker_labelled, ecoready

pytestmark = pytest.mark.docker

IMAGE = "127.0.0.1:5000/lab/licensed:1"


def licensed_matrix(directory: Path, env: str = "") -> Path:
    path = directory / "licensed.toml"
    options = f'options = {{ mode = "service"{", env = { LICENSE_KEY = " + json.dumps(env) + " }" if env else ""} }}'
    path.write_text(
        'profile = "smoke"\narches = ["amd64", "arm64"]\n[[components]]\nid = "licensed"\n'
        f'category = "app"\nprobe = "command"\nimage = "{IMAGE}"\n{options}\n'
    )
    return path


def run(matrix: Path, out: Path) -> tuple[int, dict[str, Any], str]:
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--json", str(out), timeout=900)
    report: dict[str, Any] = json.loads(out.read_text())
    assert docker_labelled(f"ecoready.run={report['run_id']}") == {"containers": [], "networks": [], "volumes": []}
    return result.returncode, report, result.stderr


def test_an_image_asking_for_a_licence_key_is_locked_with_what_to_provide(lab: Path, tmp_path: Path) -> None:
    code, report, stderr = run(licensed_matrix(tmp_path), tmp_path / "report.json")
    assert code == 1, stderr[-2000:]  # not ready: neither the tool's error (3) nor a pass
    generic = next(ask for ask in LICENCE_ASKS if ask.wants == "a licence key")
    for cell in report["cells"]:
        assert cell["status"] == "locked", (cell["id"], cell["detail"], cell["log_tail"][-3:])
        start = next(s for s in cell["stages"] if s["stage"] == "start")
        assert start["outcome"] == "skip" and start["blame"]["cause"] == "needs-licence"
        assert start["blame"]["fix"] == generic.provide  # what to provide, from the phrase table's row
        assert "a license key is required" in start["detail"]  # the image's own words, quoted
        assert cell["coverage"]["checked"] is False and cell["coverage"]["ran"] == ["image", "start"]
        assert not any(c["outcome"] == "pass" for s in cell["stages"] for c in s["checks"])
    assert {c["arch"]: c["emulated"] for c in report["cells"]} == {"amd64": False, "arm64": True}
    # the summary says it locked, with what to provide, once per cell; no registry or engine blamed
    assert "arm64 (" in stderr and "locked: licensed (needs a licence)" in stderr
    assert stderr.count(f"what to do: {generic.provide}") == 2
    plan = report["migration"]["plan"]
    assert {s["action"] for s in plan} == {"provide"}


def test_given_its_key_the_same_image_serves(lab: Path, tmp_path: Path) -> None:
    """The remedy is real: the row's `env` gives the key, and the cells are ready."""
    code, report, stderr = run(licensed_matrix(tmp_path, env="lab-key"), tmp_path / "report.json")
    assert code == 0, stderr[-2000:]
    assert {c["id"]: c["status"] for c in report["cells"]} == {"licensed/amd64": "ready", "licensed/arm64": "ready"}
