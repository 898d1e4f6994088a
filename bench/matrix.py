"""The lab matrix (smoke profile, both arches) with ecoready's scheduler against the same
cells one at a time (--concurrency 1, the sequential baseline), in one run. Also the
containers' CPU seconds divided by the host's cores: the lower bound on wall time.
Targets (2 cores): speed-up >= 1.6x, wall <= 1.3x the lower bound.

    .venv/bin/python bench/matrix.py [--matrix containers/lab.toml] [--only ID,...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: bench/ and tests/ import as packages
from bench._measure import ContainerCpu, ecoready_exe

ROOT = Path(__file__).resolve().parents[1]


def run(matrix: str, extra: list[str]) -> tuple[float, float, float, dict[str, int]]:
    """(wall s, containers' CPU s, whole machine's busy CPU s, status counts) of one
    headless smoke run."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        started = time.monotonic()
        proc = subprocess.Popen(
            [ecoready_exe(), "run", "--headless", "--matrix", matrix, "--profile", "smoke", "--json", out.name, *extra],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with ContainerCpu() as containers:
            proc.wait()
        wall = time.monotonic() - started
        summary = json.loads(Path(out.name).read_text())["summary"]
    return wall, containers.total, containers.host_busy, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matrix", default="containers/lab.toml")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    extra = ["--only", args.only] if args.only else []
    cores = os.cpu_count() or 1
    wall_s, cpu_s, busy_s, summary_s = run(args.matrix, extra)
    wall_1, cpu_1, busy_1, summary_1 = run(args.matrix, [*extra, "--concurrency", "1"])
    if not cpu_s:
        sys.exit("no container CPU could be read from /sys/fs/cgroup: the lower bound cannot be computed")
    bound = cpu_s / cores
    print(f"{'':28} {'wall s':>8} {'containers CPU s':>17} {'machine busy CPU s':>19}  statuses")
    print(f"{'scheduled (default)':28} {wall_s:8.1f} {cpu_s:17.1f} {busy_s:19.1f}  {summary_s}")
    print(f"{'sequential (--concurrency 1)':28} {wall_1:8.1f} {cpu_1:17.1f} {busy_1:19.1f}  {summary_1}")
    # The machine's busy CPU adds the engine's own work (dockerd, containerd, runc, the
    # kernel's network set-up for each container) and ecoready's: wall against it says how
    # much of the gap is idle CPU and how much is work outside the containers.
    print(
        f"CPU lower bound on {cores} cores: {bound:.1f} s; scheduled wall / lower bound = {wall_s / bound:.2f} "
        f"(target <= 1.3); wall / (machine busy CPU / cores) = {wall_s / (busy_s / cores):.2f}; "
        f"work outside containers = {(busy_s - cpu_s) / busy_s * 100:.0f}% of the busy CPU"
    )
    speedup = wall_1 / wall_s
    print(
        f"ratio: speed-up over sequential = {speedup:.2f}x (target >= 1.6x) -> {'OK' if speedup >= 1.6 else 'MISSED'}"
        f"; wall/lower bound {wall_s / bound:.2f} -> {'OK' if wall_s / bound <= 1.3 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
