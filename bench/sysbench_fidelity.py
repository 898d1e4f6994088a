#!/usr/bin/env python3
"""Does ecoready's bench measure what a person measures by hand?

In one run, on one lab server (the lab's MariaDB, started and pinned by ecoready as in a
`--profile quick` run, tables prepared once), this alternates A B A B ...:

  A  by hand: `docker exec <sysbench container> sysbench <workload> <the same options>`,
     the command a person would type (no interval reports), parsed here with a plain regex;
  B  ecoready: the bench driver's run of the same point (`SysbenchDriver.run`), with its own
     options (interval reports, percentile), exec and parser.

It prints every pair, the median tps of each side and the ratio B / A. Target: >= 0.97.

    .venv/bin/python bench/sysbench_fidelity.py [--pairs 5] [--time 10] [--threads 1]
        [--workload oltp_point_select] [--arch amd64]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from ecoready.domain.model import Profile
from ecoready.matrix.load import load
from ecoready.probe_api.bench import SysbenchDriver
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.sysbench import BENCH_DB, BENCH_USER, CONFIG_FILE, coefficient_of_variation
from ecoready.probes.server import ServerProbe
from ecoready.run.session import RunOptions, Session

ROOT = Path(__file__).resolve().parents[1]

TARGET = 0.97
TPS = re.compile(r"transactions:\s+\d+\s+\(([0-9.]+) per sec\.\)")


def by_hand_argv(
    container: str, host: str, workload: str, threads: int, seconds: int, tables: int, rows: int
) -> list[str]:
    """What a person types: the same benchmark options, written out here on purpose
    (not built by ecoready), and no interval reports."""
    return [
        "docker",
        "exec",
        container,
        "sysbench",
        workload,
        f"--config-file={CONFIG_FILE}",  # the password file ecoready put there (not on argv)
        f"--mysql-host={host}",
        "--mysql-port=3306",
        f"--mysql-user={BENCH_USER}",
        f"--mysql-db={BENCH_DB}",
        f"--tables={tables}",
        f"--table_size={rows}",
        f"--threads={threads}",
        f"--time={seconds}",
        "--rand-type=uniform",
        "run",
    ]


async def by_hand(argv: list[str], timeout: float) -> float:
    proc = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    text = out.decode("utf-8", "replace")
    match = TPS.search(text)
    if proc.returncode != 0 or not match:
        raise SystemExit(f"by-hand sysbench failed (exit {proc.returncode}):\n{text[-2000:]}")
    return float(match.group(1))


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matrix", default=str(ROOT / "containers" / "lab.toml"))
    parser.add_argument("--component", default="mariadb-10.11")
    parser.add_argument("--arch", default="amd64")
    parser.add_argument("--workload", default="oltp_point_select")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--time", type=int, default=10, help="seconds per run")
    parser.add_argument("--pairs", type=int, default=5, help="A B pairs")
    parser.add_argument(
        "--b-first", action="store_true", help="B A B A instead (to see whether going second costs anything)"
    )
    args = parser.parse_args()

    matrix = load(args.matrix)
    session = Session(
        matrix, RunOptions(only=[args.component], arches=[args.arch], profile=Profile.QUICK), emit=lambda _e: None
    )
    plan = await session.open()
    assert session.runner is not None
    cell = plan.cells[0]
    assert cell.bench is not None
    settings = replace(cell.bench, workloads=(args.workload,), access=("uniform",), threads=(args.threads,))
    ctx = ProbeContext(cell, session.runner.run)
    try:
        await ctx.image_info()
        probe = ServerProbe(ctx)
        await probe.start()
        assert probe.endpoint is not None
        driver = SysbenchDriver(ctx, probe.endpoint, settings)
        await driver.setup()
        print(f"{driver.caps.tool if driver.caps else 'sysbench'} on {cell.id}; pinned: {driver.cpusets or 'no'}")
        print(await driver.prepare())
        assert driver.container is not None
        hand = by_hand_argv(
            driver.container.name,
            probe.endpoint.host,
            args.workload,
            args.threads,
            args.time,
            settings.tables,
            settings.table_size,
        )
        print("A (by hand):", " ".join(hand))
        await driver.run(args.workload, "uniform", args.threads, max(settings.warmup, 5))  # one warmup for both
        a_tps: list[float] = []
        b_tps: list[float] = []
        for pair in range(1, args.pairs + 1):
            if args.b_first:
                b = (await driver.run(args.workload, "uniform", args.threads, args.time)).tps
                a = await by_hand(hand, args.time + 60)
            else:
                a = await by_hand(hand, args.time + 60)
                b = (await driver.run(args.workload, "uniform", args.threads, args.time)).tps
            a_tps.append(a)
            b_tps.append(b)
            print(f"pair {pair}: A {a:12,.2f} tps   B {b:12,.2f} tps   B/A {b / a:.3f}")
    finally:
        await ctx.close()
        await session.close()
    a_med, b_med = statistics.median(a_tps), statistics.median(b_tps)
    ratio = b_med / a_med
    pair_ratios = [b / a for a, b in zip(a_tps, b_tps, strict=True)]
    print(f"median tps: A (by hand) {a_med:,.2f}   B (ecoready) {b_med:,.2f}")
    # the machine's noise, for judging the ratio (a difference under ~2x CV is noise)
    cv_a, cv_b = coefficient_of_variation(a_tps) * 100, coefficient_of_variation(b_tps) * 100
    pair_median = statistics.median(pair_ratios)
    print(f"noise: CV of A {cv_a:.1f}%, of B {cv_b:.1f}%; median of the pair ratios {pair_median:.3f}")
    print(f"ratio B/A = {ratio:.3f}  (target >= {TARGET})  {'OK' if ratio >= TARGET else 'BELOW TARGET'}")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
