"""The TUI in a real terminal (tmux) at 80x24 and 200x60, on a run that needs no container:
one image the lab registry does not have (missing), one whose registry cannot be reached
(error). Small: every line within the width, the grid and its rows on screen. Large: the
arch columns use the room (a cell says more than at 80), nothing wider than the terminal."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")]

EXE = Path(sys.executable).with_name("ecoready")
MATRIX = """
title = "tmux"
arches = ["amd64", "arm64"]
profile = "smoke"
[[components]]
id = "ghost-with-a-long-component-name"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/does-not-exist:1"
[[components]]
id = "far"
category = "server"
probe = "server"
image = "nowhere.invalid/lib/mariadb:10.11"
"""


def tmux(socket: str, *args: str) -> str:
    argv = ["tmux", "-L", socket, "-f", "/dev/null", *args]  # a server of its own, no user config
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True).stdout


def descendants(pid: int) -> set[int]:
    """`pid` and every process under it, from /proc."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, todo = set(), [pid]
    while todo:
        current = todo.pop()
        found.add(current)
        todo += [child for child, parent in parents.items() if parent == current and child not in found]
    return found


def alive(pids: set[int]) -> set[int]:
    return {pid for pid in pids if Path(f"/proc/{pid}").exists()}


def screen_at(tmp_path: Path, columns: int, rows: int, *, quit_first: bool = True) -> list[str]:
    """The screen once both cells showed; then `q` (unless not `quit_first`) and the
    terminal killed: the TUI must end, its cleanup done, whatever moment the terminal went."""
    (tmp_path / "m.toml").write_text(MATRIX)
    session = f"ecoready-{uuid.uuid4().hex[:8]}"
    socket = session
    # the terminal says its size (COLUMNS or LINES inherited from pytest would override it)
    command = f"cd {tmp_path} && env -u COLUMNS -u LINES NO_COLOR=1 {EXE} run --matrix m.toml"
    tmux(socket, "new-session", "-d", "-s", session, "-x", str(columns), "-y", str(rows), command)
    pane = int(tmux(socket, "display-message", "-p", "-t", session, "#{pane_pid}"))
    processes = descendants(pane)
    try:
        deadline = time.monotonic() + 60
        lines: list[str] = []
        while time.monotonic() < deadline:
            lines = tmux(socket, "capture-pane", "-p", "-t", session).splitlines()
            text = "\n".join(lines)
            if "done" in text and "missing" in text and "error" in text:
                time.sleep(1)  # the last frame
                processes |= descendants(pane)
                return tmux(socket, "capture-pane", "-p", "-t", session).splitlines()
            time.sleep(0.3)
        raise AssertionError("the grid never showed both cells:\n" + "\n".join(lines))
    finally:
        if quit_first:
            subprocess.run(["tmux", "-L", socket, "send-keys", "-t", session, "q"], capture_output=True, timeout=10)
            time.sleep(0.5)
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=10)
        gone_by = time.monotonic() + 60
        while alive(processes) and time.monotonic() < gone_by:
            time.sleep(0.2)
        left = alive(processes)
        for pid in left:
            subprocess.run(["kill", "-9", str(pid)], capture_output=True, timeout=10)
        assert not left, f"the TUI outlived its terminal by 60 s: {left}"


def arch_column(lines: list[str], word: str) -> str:
    """The text of the row that names `word`, after its name."""
    start = next(n for n, line in enumerate(lines) if line.strip().startswith("component "))
    row = next(line for line in lines[start:] if line.strip().startswith(word))
    return row[row.index(word) + len(word) :].strip()


def test_the_tui_fits_80x24(tmp_path: Path) -> None:
    lines = screen_at(tmp_path, 80, 24)
    assert len(lines) <= 24 and all(len(line) <= 80 for line in lines)
    text = "\n".join(lines)
    assert "amd64" in text and "arm64" in text and "far" in text
    assert "ᵉ" not in arch_column(lines, "far")  # never ran: no emulated mark
    assert arch_column(lines, "ghost").count("∅") == 2  # each cell keeps its glyph


def test_the_tui_uses_a_large_terminal(tmp_path: Path) -> None:
    small = screen_at(tmp_path, 80, 24)
    large = screen_at(tmp_path, 200, 60)
    assert all(len(line) <= 200 for line in large)
    assert max(len(line.rstrip()) for line in large) > 120, "\n".join(large)  # the room is used
    # the ghost row says more of why in the large terminal than in the small one
    assert len(arch_column(large, "ghost")) > len(arch_column(small, "ghost"))
    # a wide terminal shows a failure's whole reason in its cell (two of them side by side)
    assert arch_column(large, "far").count("unreachable (cannot resolve the name)") == 2


def test_the_tui_ends_when_its_terminal_is_gone(tmp_path: Path) -> None:
    # the terminal killed under the running app (an ssh session dropped): no `q` first
    lines = screen_at(tmp_path, 80, 24, quit_first=False)
    assert any("missing" in line for line in lines)
