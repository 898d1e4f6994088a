"""Reliability (issue 9): dockerd stopped mid-run gives the documented outcome: the
affected cells end as `error: docker daemon unavailable`, the report is still written, and
ecoready exits non-zero. The engine stopped is the tests' own second dockerd
(tests/support/second_engine.py), never the machine's: other people's runs live there."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.support.cli import ecoready
from tests.support.runs import Run, write_matrix
from tests.support.second_engine import SecondEngine

pytestmark = pytest.mark.docker  # and `alone`: it uses the second engine (tests/conftest.py)


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_dockerd_stopped_mid_run(lab: Path, second_engine: SecondEngine, tmp_path: Path, how: str) -> None:
    second_engine.ensure_running()
    matrix = write_matrix(
        tmp_path / "m.toml",
        f'profile = "smoke"\narches = ["amd64"]\n[[hosts]]\nname = "engine"\ndocker = "{second_engine.unix_url}"\n'
        "concurrency = 1\n"  # the second cell waits: it meets an engine already gone
        + "".join(
            f'[[components]]\nid = "{cid}"\ncategory = "{category}"\nprobe = "{probe}"\n'
            f'image = "127.0.0.1:5000/lab/{image}"\n'
            # the cell in smoke must outlast the engine's stop: replication's smoke takes
            # seconds (the server probe's is two client runs, over before dockerd stops).
            # Both rows are replication, as the scheduler may start either first: the one
            # that waits meets an engine already gone, whichever it is
            for cid, category, probe, image in (
                ("first", "ha", "replication", "mariadb:10.11"),
                ("second", "ha", "replication", "mariadb:11.8"),
            )
        ),
    )
    run = Run(matrix, tmp_path)
    try:
        run.wait_for_stage("smoke", timeout=600)
        deadline = time.monotonic() + 60
        while not second_engine.labelled(run.owner)["containers"] and time.monotonic() < deadline:
            time.sleep(0.2)
        second_engine.stop() if how == "stop" else second_engine.kill()
        code, report = run.finish(timeout=600)
    finally:
        if run.proc.poll() is None:
            run.proc.send_signal(signal.SIGTERM)
            run.proc.wait(timeout=120)
        second_engine.ensure_running()
    assert code != 0 and code == 3, report["_stderr"][-3000:]
    assert report.get("run_id"), "the report was not written"
    cells = {c["id"]: c for c in report["cells"]}
    assert set(cells) == {"first/amd64", "second/amd64"}
    for cell in cells.values():
        assert cell["status"] == "error", cell
        assert "docker daemon unavailable" in cell["detail"], cell
    assert report["hosts"][0]["error"].startswith("lost mid-run")
    assert report["finished_at"] and not report["interrupted"]
    assert any("host engine was lost mid-run" in note["text"] for note in report["notes"])
    # what the engine kept of the run goes once it is back, as the note says
    cleanup = ecoready("cleanup", "--matrix", str(matrix))
    assert cleanup.returncode == 0, cleanup.stderr
    assert second_engine.labelled(run.owner) == {"containers": [], "networks": [], "volumes": []}
