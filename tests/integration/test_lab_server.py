"""The server probe on the lab's MariaDB, on amd64 (native) and arm64 (emulated), through
the real engine and the real registry, as a user runs it."""

from __future__ import annotations

import collections
import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import TEST_LABEL_KEY, TEST_SESSION, docker_labelled, ecoready

pytestmark = pytest.mark.docker
SESSION_LABEL = f"label={TEST_LABEL_KEY}={TEST_SESSION}"


def readiness_pings(events: str) -> collections.Counter[str]:
    """Readiness round trips (`SELECT 1 AS ok` execs) per cell, from `docker events` JSON lines."""
    pings: collections.Counter[str] = collections.Counter()
    for line in events.splitlines():
        event = json.loads(line)
        if event.get("status", "").startswith("exec_create:") and event["status"].endswith("SELECT 1 AS ok"):
            pings[event["Actor"]["Attributes"].get("ecoready.cell", "?")] += 1
    return pings


def smoke_of(cell: dict) -> dict:
    return next(s for s in cell["stages"] if s["stage"] == "smoke")


def test_lab_server_cells_are_ready_on_both_arches(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    out = tmp_path / "report.json"
    watch = subprocess.Popen(
        # this session's containers only: other test workers run the same cells
        ["docker", "events", "--format", "{{json .}}", "--filter", "type=container", "--filter", SESSION_LABEL],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        result = ecoready("run", "--headless", "--matrix", str(lab), "--only", "mariadb-10.11", "--json", str(out))
    finally:
        watch.terminate()
        events, _ = watch.communicate(timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # diagnostics on stderr only
    report = json.loads(out.read_text())
    cells = {c["id"]: c for c in report["cells"]}
    amd, arm = cells["mariadb-10.11/amd64"], cells["mariadb-10.11/arm64"]
    for cell in (amd, arm):
        assert cell["status"] == "ready", cell
        assert [s["stage"] for s in cell["stages"]] == ["image", "audit", "start", "smoke"]
        assert all(s["outcome"] == "pass" for s in cell["stages"])
        assert cell["image"]["digest"].startswith("sha256:") and cell["image"]["found_as"] == "index"
    assert amd["emulated"] is False and arm["emulated"] is True
    checks = {c["name"]: c for c in smoke_of(arm)["checks"]}
    assert set(checks) == {"crud", "version", "arch", "auth"}
    assert checks["arch"]["detail"] == "aarch64"
    assert {c["name"]: c for c in smoke_of(amd)["checks"]}["arch"]["detail"] == "x86_64"
    # the two arches ran different images (pulled by per-arch digest, not by a shared tag)
    assert amd["image"]["digest"] != arm["image"]["digest"]
    assert docker_labelled(f"ecoready.run={report['run_id']}")["containers"] == []
    assert "ready" in result.stderr and "mariadb-10.11/arm64" in result.stderr
    # Readiness looks at the server's sockets in /proc and runs the client only once one is
    # open: a round trip or two per server, not one every backoff step of its start-up
    # (5-8 of them before app/engine/procnet.py, on the emulated cell most).
    pings = readiness_pings(events)
    assert set(pings) == {"mariadb-10.11/amd64", "mariadb-10.11/arm64"}, pings
    assert all(n <= 2 for n in pings.values()), pings


def test_json_to_stdout_is_only_json(lab: Path, no_leaks: None) -> None:
    result = ecoready(
        "run", "--headless", "--matrix", str(lab), "--only", "mariadb-10.11", "--arch", "amd64", "--json", "-"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [c["status"] for c in report["cells"]] == ["ready"]


def test_a_missing_arch_is_missing_not_broken(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        '[[components]]\nid = "ghost"\ncategory = "server"\nprobe = "server"\n'
        'image = "127.0.0.1:5000/lab/does-not-exist:1"\n'
    )
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--arch", "amd64", "--json", "-")
    assert result.returncode == 1, result.stderr
    (cell,) = json.loads(result.stdout)["cells"]
    assert cell["status"] == "missing"


def test_an_unreachable_registry_is_an_error_not_missing(tmp_path: Path, no_leaks: None) -> None:
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        '[[components]]\nid = "far"\ncategory = "server"\nprobe = "server"\nimage = "127.0.0.1:9/lab/mariadb:10.11"\n'
    )
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--arch", "amd64", "--json", "-")
    assert result.returncode == 3, result.stderr
    (cell,) = json.loads(result.stdout)["cells"]
    assert cell["status"] == "error"
    assert "127.0.0.1:9" in cell["detail"] and "unreachable" in cell["detail"]
