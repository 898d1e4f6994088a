"""What ecoready itself costs: its own process CPU seconds against the containers' CPU
seconds during a run (default: the lab's mariadb-10.11 with the quick profile), and the
TUI's CPU while it sits idle for 30 s after a run. Targets: ecoready below 3% of the
containers' CPU; the idle TUI below 1% of one core.

    .venv/bin/python bench/overhead.py [--matrix containers/lab.toml] [--only mariadb-10.11]
                                       [--profile quick] [--idle 30]
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: bench/ and tests/ import as packages
from bench._measure import ContainerCpu, ecoready_exe, process_cpu_seconds

ROOT = Path(__file__).resolve().parents[1]


def headless(matrix: str, only: str, profile: str) -> tuple[float, float, float]:
    """(ecoready CPU s, containers' CPU s, wall s) of one headless run."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [
            ecoready_exe(),
            "run",
            "--headless",
            "--matrix",
            matrix,
            "--only",
            only,
            "--profile",
            profile,
            "--json",
            os.devnull,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with ContainerCpu() as containers:
        # wait4: the rusage of this one child (and what it waited for), not of the sampler's
        # own `docker ps` calls, which RUSAGE_CHILDREN would add in
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    return usage.ru_utime + usage.ru_stime, containers.total, wall


def idle_tui(matrix: str, only: str, idle: float) -> tuple[float, float]:
    """(CPU s used by the TUI while idle, seconds idle): run the TUI in a pseudo-terminal
    on a one-cell matrix, wait until the run is over (the status bar says how long it
    took), then watch it do nothing."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the TUI on a 100x30 terminal
        os.environ.update({"COLUMNS": "100", "LINES": "30", "TERM": "xterm-256color"})
        os.execv(ecoready_exe(), [ecoready_exe(), "run", "--matrix", matrix, "--only", only, "--arch", "amd64"])
    screen = b""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and b" took " not in screen:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                screen = (screen + os.read(fd, 65536))[-200_000:]
            except OSError:
                break
    settled = process_cpu_seconds(pid)
    started = time.monotonic()
    while time.monotonic() - started < idle:  # keep draining the terminal, as a real one would
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            os.read(fd, 65536)
    used = process_cpu_seconds(pid) - settled
    os.write(fd, b"q")
    time.sleep(2)
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    return used, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matrix", default="containers/lab.toml")
    parser.add_argument("--only", default="mariadb-10.11")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--idle", type=float, default=30.0)
    args = parser.parse_args()
    own, containers, wall = headless(args.matrix, args.only, args.profile)
    share = own / containers * 100 if containers else float("inf")
    print(f"headless run ({args.only}, profile {args.profile}): wall {wall:.1f} s")
    print(f"  ecoready process CPU: {own:.2f} s")
    print(f"  containers' CPU:      {containers:.2f} s")
    print(
        f"ratio: ecoready CPU = {share:.2f}% of the containers' CPU (target < 3%) -> {'OK' if share < 3 else 'MISSED'}"
    )
    used, seconds = idle_tui(args.matrix, args.only, args.idle)
    idle_share = used / seconds * 100
    print(f"idle TUI: {used:.2f} CPU s over {seconds:.0f} s")
    print(f"ratio: idle TUI = {idle_share:.2f}% of one core (target < 1%) -> {'OK' if idle_share < 1 else 'MISSED'}")


if __name__ == "__main__":
    main()
