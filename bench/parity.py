#!/usr/bin/env python3
"""What parity costs a run: the lab matrix run headless with parity off
(`ECOREADY_PARITY=off`: no package database read, no facts queried, nothing compared) and
on, alternating, each run with an empty audit cache of its own (both read every program
cold; the run with parity reads the package databases too). Wall time, the containers' CPU
(cgroups) and ecoready's own CPU (`wait4`), the median of `--pairs`; the ratio line is the
run with parity over the run without. Target: under 10% more wall time.

    .venv/bin/python bench/parity.py [--matrix containers/lab.toml] [--only a,b] [--arch amd64]
                                     [--profile smoke] [--pairs 2] [--pure-only]

It first measures ecoready's own share without the engine (`--pure-only`: only that).

Needs the lab (`ecoready lab build`, the gaps included). Run it on a quiet machine: every
container of the engine counts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: bench/ imports as a package
from bench._measure import ContainerCpu, ecoready_exe

ROOT = Path(__file__).resolve().parents[1]
TARGET = 0.10


@dataclass(frozen=True)
class Run:
    wall: float
    containers: float
    own: float
    compared: int  # cells that carry a parity comparison
    note: str  # the run's parity note


def one_run(args: argparse.Namespace, parity: bool) -> Run:
    with tempfile.TemporaryDirectory(prefix="ecoready-parity-bench-") as scratch:
        out = Path(scratch) / "report.json"
        argv = [ecoready_exe(), "run", "--headless", "--matrix", args.matrix, "--profile", args.profile]
        argv += ["--json", str(out)]
        argv += ["--only", args.only] if args.only else []
        argv += ["--arch", args.arch] if args.arch else []
        env = {**os.environ, "ECOREADY_PARITY": "on" if parity else "off", "XDG_CACHE_HOME": scratch}
        started = time.monotonic()
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with ContainerCpu() as containers:
            _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            raise SystemExit(f"the run ended with exit code {code}: is the lab built (`ecoready lab build`)?")
        report = json.loads(out.read_text())
    compared = sum(1 for c in report["cells"] if c.get("parity") is not None)
    note = next((n["text"] for n in report["notes"] if n["text"].startswith("parity:")), "")
    return Run(wall, containers.total, usage.ru_utime + usage.ru_stime, compared, note)


def pure_cost(repeats: int = 20) -> float:
    """ecoready's own work for one component's two cells, without the engine: a package
    database the size of this machine's dpkg status parsed twice, 600 variables and 500
    collations fingerprinted and compared; CPU milliseconds, the median of `repeats`."""
    from ecoready.audit.packages import dpkg
    from ecoready.domain.parity import Facet, Facts, compare, print_of

    status = Path("/var/lib/dpkg/status")
    data = status.read_bytes() if status.is_file() else b""
    variables = {f"variable_{i}": str(i) for i in range(600)}
    collations = {f"collation_{i}": "" for i in range(500)}
    times = []
    for _ in range(repeats):
        began = time.process_time()
        cells = []
        for _arch in ("amd64", "arm64"):
            found = {
                Facet.PACKAGES: Facts(Facet.PACKAGES, dpkg(data)),
                Facet.VARIABLES: Facts(Facet.VARIABLES, variables),
                Facet.COLLATIONS: Facts(Facet.COLLATIONS, collations),
            }
            [print_of(f) for f in found.values()]
            cells.append(found)
        compare("amd64", cells[0], cells[1])
        times.append((time.process_time() - began) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matrix", default="containers/lab.toml")
    parser.add_argument("--only", default="", help="rows to run (default: every row of the matrix)")
    parser.add_argument("--arch", default="", help="one arch (default: the matrix's)")
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--pure-only", action="store_true", help="only ecoready's own work, no engine")
    args = parser.parse_args()
    print(f"ecoready's own parity work for a component's two cells: {pure_cost():.1f} CPU ms", flush=True)
    if args.pure_only:
        return
    runs: dict[bool, list[Run]] = {False: [], True: []}
    for i in range(args.pairs):
        for parity in (False, True) if i % 2 == 0 else (True, False):  # alternate which goes first
            run = one_run(args, parity)
            runs[parity].append(run)
            said = f", {run.compared} cells compared" if parity else ""
            print(
                f"pair {i + 1} parity {'on ' if parity else 'off'}: wall {run.wall:7.1f} s, containers' CPU "
                f"{run.containers:7.1f} s, ecoready CPU {run.own:5.1f} s{said}",
                flush=True,
            )
    off, on = runs[False], runs[True]
    if on[-1].note:
        print(on[-1].note)
    wall = statistics.median(r.wall for r in on) / statistics.median(r.wall for r in off) - 1
    cpu_on = statistics.median(r.containers + r.own for r in on)
    cpu = cpu_on / statistics.median(r.containers + r.own for r in off) - 1
    print(f"CPU (containers + ecoready): {cpu * 100:+.1f}% with parity")
    verdict = "OK" if wall < TARGET else "MISSED"
    print(f"ratio: a run with parity takes {wall * 100:+.1f}% wall time (target < {TARGET:.0%}) -> {verdict}")


if __name__ == "__main__":
    main()
