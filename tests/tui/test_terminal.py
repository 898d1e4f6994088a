"""The installed `ecoready` on a real pseudo-terminal of 80x24, as a person starts it: the
grid is drawn, SIGTERM mid-run (alone, or the first of a burst with SIGINT) makes it say
it is cleaning up, remove what the run started, and exit 143."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.support.cli import LAB_MATRIX, ROOT, TEST_LABEL_KEY, TEST_SESSION, docker_labelled

pytestmark = pytest.mark.docker


def read_for(fd: int, seconds: float, until: bytes = b"") -> bytes:
    out = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
            if until and until in out:
                break
    return out


# one SIGTERM, and a burst (a supervisor's stop, then `kill -INT`) a few times over: the
# first one counts (before the fix, a late SIGINT sometimes killed the process: exit -2)
BURST = (signal.SIGTERM, signal.SIGTERM, signal.SIGINT)


@pytest.mark.parametrize(
    "burst", [(signal.SIGTERM,), *[BURST] * 4], ids=["sigterm", *[f"burst-{i}" for i in range(1, 5)]]
)
def test_sigterm_on_a_terminal_cleans_up_and_says_so(lab: Path, burst: tuple[int, ...], no_leaks: None) -> None:
    exe = str(Path(sys.executable).with_name("ecoready"))
    argv = [exe, "run", "--matrix", str(LAB_MATRIX), "--only", "mariadb-10.11", "--arch", "arm64"]
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal of 80x24, then ecoready; never back into pytest
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
            os.chdir(ROOT)
            os.execve(exe, argv, env)
        finally:
            os._exit(127)
    try:
        screen = read_for(fd, 60, until=b"mariadb-10.11")
        assert b"mariadb-10.11" in screen, screen[-2000:]
        label = f"{TEST_LABEL_KEY}={TEST_SESSION}"
        deadline = time.monotonic() + 180
        while not docker_labelled(label)["containers"]:
            assert time.monotonic() < deadline, "no container started"
            screen += read_for(fd, 0.5)
        for sig in burst:
            os.kill(pid, sig)
            screen += read_for(fd, 0.3)
        screen += read_for(fd, 120)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 128 + signal.SIGTERM
    assert b"stopping the run and removing its containers" in screen
    assert docker_labelled(label) == {"containers": [], "networks": [], "volumes": []}
