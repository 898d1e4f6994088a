"""`ecoready watch` as a user runs it: a check that fails (the engine cannot be reached)
does not end the watch; SIGTERM between checks ends it cleanly. No engine is needed: the
matrix points at a docker host where nothing listens."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.cli import ROOT, ecoready

UNREACHABLE = """[[hosts]]
name = "far"
docker = "tcp://127.0.0.1:9"
arches = ["amd64"]

[[components]]
id = "mariadb-10.11"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:10.11"
"""


def test_watch_survives_failed_checks(tmp_path: Path) -> None:
    matrix = tmp_path / "far.toml"
    matrix.write_text(UNREACHABLE)
    result = ecoready(
        "watch", "--every", "1s", "--runs", "2", "--matrix", str(matrix), "--history", str(tmp_path / "h"), timeout=120
    )
    assert result.returncode == 3, result.stderr  # the last check's environment error
    assert result.stderr.count("is unreachable") == 2  # both checks ran and failed
    assert "watch: check 1 failed" in result.stderr and "next in" in result.stderr
    assert "Traceback" not in result.stderr


def test_watch_checks_its_arguments_and_stops_on_sigterm(tmp_path: Path) -> None:
    bad = ecoready("watch", "--every", "soon", "--matrix", str(tmp_path / "x.toml"))
    assert bad.returncode == 2 and "cannot read 'soon' as a duration" in bad.stderr
    matrix = tmp_path / "far.toml"
    matrix.write_text(UNREACHABLE)
    exe = Path(sys.executable).with_name("ecoready")
    watch = subprocess.Popen(
        [str(exe), "watch", "--every", "1h", "--matrix", str(matrix), "--history", str(tmp_path / "h")],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=os.environ.copy(),
    )
    try:
        assert watch.stderr is not None
        for line in watch.stderr:
            if "next in" in line:  # the first check is over: the watch sleeps now
                break
        watch.send_signal(signal.SIGTERM)
        assert watch.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        if watch.poll() is None:
            watch.kill()
