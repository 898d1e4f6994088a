#!/usr/bin/env python3
"""The CPU model qemu-user emulates for arm64, side by side in one run: qemu's default
`max` against the model ecoready picks (engine/platform.EMULATED_CPU, Neoverse N1), on the
work emulated cells do most: MySQL and MariaDB starting through their entrypoints, Perl
loading a big Percona Toolkit script, and sysbench's CPU loop. Container CPU seconds (from
the cgroups) and wall time, the median of `--runs`, the models interleaved.

    sudo .venv/bin/python bench/emulated_cpu.py [--runs 3]

Needs the lab's arm64 images (`ecoready lab build`) on an amd64 machine with qemu-user
registered (`make setup`). Run it on a quiet machine: every container's CPU counts.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: bench/ imports as a package
from bench._measure import ContainerCpu
from ecoready.engine.platform import EMULATED_CPU, WIDEST_CPU, host_arch
from ecoready.lab.recipes import image_named, image_tag

ARCH = "arm64"
READY = "ready for connections"


@dataclass(frozen=True)
class Workload:
    name: str
    image: str  # the lab image's key
    argv: tuple[str, ...]  # the container's command (the image's entrypoint runs it)
    env: tuple[tuple[str, str], ...] = ()
    ready_line: str = ""  # "": the container runs to its end; else: done when logged twice


WORKLOADS = (
    Workload(
        "MySQL 9.7 start (entrypoint: set-up server, then the server)",
        "mysql:9.7",
        ("mysqld",),
        (("MYSQL_ROOT_PASSWORD", "bench"),),
        READY,
    ),
    Workload(
        "MariaDB 10.11 start (entrypoint: set-up server, then the server)",
        "mariadb:10.11",
        ("mariadbd",),
        (("MARIADB_ROOT_PASSWORD", "bench"),),
        READY,
    ),
    Workload(
        "Perl: pt-online-schema-change --version, 5 times",
        "tools:bookworm",  # published as lab/percona-toolkit:3.2 too
        ("sh", "-c", "for i in 1 2 3 4 5; do pt-online-schema-change --version >/dev/null; done"),
    ),
    Workload(
        "sysbench cpu, 2,000 events",
        "mariadb:10.11",
        ("sysbench", "cpu", "--threads=1", "--time=0", "--events=2000", "run"),
    ),
)


def local_tag(key: str) -> str:
    return image_tag(image_named(key), ARCH)


def run_once(work: Workload, cpu: str) -> tuple[float, float]:
    """Wall and container CPU seconds of one run of `work` emulated as `cpu`."""
    name = f"ecoready-bench-cpu-{uuid.uuid4().hex[:8]}"
    env = [arg for key, value in (("QEMU_CPU", cpu), *work.env) for arg in ("-e", f"{key}={value}")]
    detach = ["-d"] if work.ready_line else []
    with ContainerCpu() as meter:
        started = time.monotonic()
        command = ["docker", "run", *detach, "--name", name, "--platform", f"linux/{ARCH}", *env]
        subprocess.run(
            [*command, local_tag(work.image), *work.argv],
            check=True,
            capture_output=True,
            timeout=600,
        )
        try:
            while work.ready_line:
                logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True, timeout=30)
                if (logs.stdout + logs.stderr).count(work.ready_line) >= 2:  # the set-up server's, then the server's
                    break
                if time.monotonic() - started > 600:
                    raise SystemExit(f"{work.name} as {cpu}: not ready in 600 s")
                time.sleep(0.2)
            wall = time.monotonic() - started
        finally:
            subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=60)
    return wall, meter.total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if host_arch() == ARCH:
        print(f"bench/emulated_cpu.py: this machine is {ARCH}: nothing is emulated", file=sys.stderr)
        return 2
    ours = EMULATED_CPU[ARCH]
    models = (WIDEST_CPU, ours)
    print(f"arm64 emulated as `{WIDEST_CPU}` (qemu's default) and as `{ours}` (ecoready's); median of {args.runs}")
    print(f"{'workload':66} {WIDEST_CPU + ' CPU s':>10} {ours + ' CPU s':>17} {'ratio':>6}   wall s")
    totals = dict.fromkeys(models, 0.0)
    for work in WORKLOADS:
        samples: dict[str, list[tuple[float, float]]] = {m: [] for m in models}
        for _ in range(args.runs):
            for model in models:
                samples[model].append(run_once(work, model))
        cpu = {m: statistics.median(s[1] for s in samples[m]) for m in models}
        wall = {m: statistics.median(s[0] for s in samples[m]) for m in models}
        for m in models:
            totals[m] += cpu[m]
        ratio = cpu[WIDEST_CPU] / cpu[ours] if cpu[ours] else float("nan")
        print(
            f"{work.name:66} {cpu[WIDEST_CPU]:10.1f} {cpu[ours]:17.1f} {ratio:5.2f}x"
            f"   {wall[WIDEST_CPU]:.1f} / {wall[ours]:.1f}"
        )
    print(
        f"{'all of them':66} {totals[WIDEST_CPU]:10.1f} {totals[ours]:17.1f} {totals[WIDEST_CPU] / totals[ours]:5.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
