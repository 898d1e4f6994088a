"""ecoready where Linux's constants do not exist: macOS's Python has no SO_PEERCRED, and
Windows' has no AF_UNIX nor SIGHUP. Each verb below runs in a Python whose `socket` and
`signal` modules lost SO_PEERCRED and SIGHUP before ecoready was imported; what needs them
(the file drop's peer credentials, the stop signals) falls back without a word of error.
AF_UNIX is taken away only where ecoready itself uses it (the file drop): on Linux the
standard library's own event loop needs it (Windows' makes its socket pairs otherwise)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ecoready.engine.filedrop import FileDrop, engine_pid

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "reports"
LAB = ROOT / "containers" / "lab.toml"

WITHOUT = """
import socket, signal, sys
for module, name in ((socket, "SO_PEERCRED"), (signal, "SIGHUP")):
    delattr(module, name)
from ecoready.__main__ import main
sys.argv = ["ecoready", *sys.argv[1:]]
sys.exit(main())
"""


def without_linux(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1"},
    )


def clean(result: subprocess.CompletedProcess[str], *codes: int) -> str:
    assert "Traceback" not in result.stderr and "AttributeError" not in result.stderr, result.stderr
    assert result.returncode in codes, (result.returncode, result.stderr[-2000:])
    return result.stdout


def test_the_registry_verbs_run_without_linux_constants(tmp_path: Path) -> None:
    assert "run" in clean(without_linux("--help"), 0)
    clean(without_linux("validate", str(LAB)), 0)
    markdown = tmp_path / "r.md"
    clean(without_linux("report", str(DATA / "lab-run.json"), "--md", str(markdown)), 0)
    assert markdown.read_text().startswith("#")
    assert clean(without_linux("plan", str(DATA / "offline-upstream.json")), 0, 1).strip()
    assert "arch" in clean(without_linux("drivers", "--matrix", str(LAB)), 0, 1)
    # the lab's registry when it is there; else the verb still runs and says so
    clean(without_linux("images", "--matrix", str(LAB), "--only", "mariadb-10.11"), 0, 1, 3)


def test_a_run_without_sighup_still_stops_on_the_signals_there_are() -> None:
    code = WITHOUT.replace("from ecoready.__main__ import main", "from ecoready.ui.signals import STOP_SIGNALS")
    code = code.split("sys.argv")[0] + "print(sorted(s.name for s in STOP_SIGNALS))\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.stdout.strip() == "['SIGINT', 'SIGTERM']", result.stderr


def test_the_file_drop_falls_back_where_there_are_no_peer_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "engine.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        server.listen(1)
        assert engine_pid(path) == os.getpid()  # Linux: the peer is this very process
        monkeypatch.delattr(socket, "SO_PEERCRED")
        assert engine_pid(path) is None  # macOS: no pid, no error
        assert FileDrop.for_engine(path, tmp_path / "root") is None  # files go through the archive API
        monkeypatch.delattr(socket, "AF_UNIX")
        assert engine_pid(path) is None  # Windows
