"""Nothing lost when an output cannot be written at the end of a real run (the lab's
MariaDB, smoke, amd64): a full disk (/dev/full) or a folder made read-only during the run
(chattr +i) fails that output alone; the others are written, the run's JSON is kept in the
state folder when its own file failed (its path printed), the exit code is 2, and no
traceback is printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import ROOT, ecoready
from tests.support.matrices import LAB_SERVER

pytestmark = pytest.mark.docker


@pytest.fixture
def smoke_matrix(tmp_path: Path) -> Path:
    path = tmp_path / "smoke.toml"
    path.write_text('profile = "smoke"\narches = ["amd64"]\n' + LAB_SERVER)
    return path


def state(tmp_path: Path) -> dict[str, str]:
    return {"XDG_STATE_HOME": str(tmp_path / "state")}


def kept(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "state" / "ecoready" / "reports").glob("*.json"))


def test_a_full_disk_for_one_format_still_writes_the_others(
    lab: Path, smoke_matrix: Path, tmp_path: Path, no_leaks: None
) -> None:
    out = {fmt: tmp_path / f"r.{fmt}" for fmt in ("json", "html", "junit")}
    result = ecoready(
        *("run", "--headless", "--matrix", str(smoke_matrix), "--md", "/dev/full"),
        *(arg for fmt, path in out.items() for arg in (f"--{fmt}", str(path))),
        env=state(tmp_path),
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert "ecoready: error: /dev/full: cannot write: No space left on device" in lines
    said = (
        f"ecoready: the JSON report is in {out['json']}; `ecoready report {out['json']} --md /dev/full` writes the rest"
    )
    assert said in lines
    assert all(path.stat().st_size > 0 for path in out.values())
    assert json.loads(out["json"].read_text())["cells"][0]["status"] == "ready"
    assert kept(tmp_path) == []  # the JSON is safe in its own file


def test_the_json_lost_to_a_full_disk_is_kept_in_the_state_folder(
    lab: Path, smoke_matrix: Path, tmp_path: Path, no_leaks: None
) -> None:
    md = tmp_path / "r.md"
    result = ecoready(
        "run", "--headless", "--matrix", str(smoke_matrix), "--json", "/dev/full", "--md", str(md), env=state(tmp_path)
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    (fallback,) = kept(tmp_path)
    assert (
        f"ecoready: the run's JSON report is kept in {fallback}; `ecoready report {fallback} --json /dev/full` "
        "writes it again" in result.stderr.splitlines()
    )
    report = json.loads(fallback.read_text())
    assert report["run_id"][:12] in fallback.name and report["cells"][0]["status"] == "ready"
    assert md.read_text().startswith("#")
    assert oct(fallback.parent.stat().st_mode & 0o777) == "0o700"


def test_a_folder_made_read_only_during_the_run_loses_nothing(
    lab: Path, smoke_matrix: Path, tmp_path: Path, no_leaks: None
) -> None:
    frozen, elsewhere = tmp_path / "frozen", tmp_path / "elsewhere"
    frozen.mkdir()
    elsewhere.mkdir()
    events = tmp_path / "events.jsonl"
    exe = Path(sys.executable).with_name("ecoready")
    args = ["run", "--headless", "--matrix", str(smoke_matrix), "--json", str(frozen / "r.json")]
    args += ["--md", str(frozen / "r.md"), "--html", str(elsewhere / "r.html")]
    proc = subprocess.Popen(
        [str(exe), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **state(tmp_path), "ECOREADY_EVENT_LOG": str(events)},
    )
    try:
        deadline = time.monotonic() + 120
        while not (events.exists() and '"RunStarted"' in events.read_text()):  # past the path checks
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)
        subprocess.run(["chattr", "+i", str(frozen)], check=True, capture_output=True, timeout=10)
        _, stderr = proc.communicate(timeout=300)
    finally:
        subprocess.run(["chattr", "-i", str(frozen)], check=True, capture_output=True, timeout=10)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2, stderr
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    for name in ("r.json", "r.md"):
        assert f"ecoready: error: {frozen / name}: cannot write: Operation not permitted" in lines
    assert list(frozen.iterdir()) == []
    assert (elsewhere / "r.html").read_text().startswith("<!DOCTYPE html>")
    (fallback,) = kept(tmp_path)
    again = f"--json {frozen / 'r.json'} --md {frozen / 'r.md'}"
    assert (
        f"ecoready: the run's JSON report is kept in {fallback}; `ecoready report {fallback} {again}` writes it again"
        in (lines)
    )
    rewritten = ecoready("report", str(fallback), "--md", str(elsewhere / "r.md"))
    assert rewritten.returncode == 0 and (elsewhere / "r.md").exists()
