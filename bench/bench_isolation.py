#!/usr/bin/env python3
"""Is a row's bench the same whether other rows ran in the same run or not?

In one sitting on the lab, alternating A B A B ...:

  A  `ecoready run --profile quick` of several server rows at once (MariaDB 10.11, MariaDB
     11.8, MySQL 9.7 on amd64): their benches run one at a time, nothing else beside them;
  B  the same matrix with `--only mariadb-10.11`: the row alone.

For MariaDB 10.11's every (workload, threads) point it prints the median tps of A and of B
and the ratio A / B, then the median ratio over all points and pairs. Target: within the
noise (|ratio - 1| <= 5%, twice ecoready's noise floor). Before benches ran alone, A read
1,565 tps where B read 7,171 (0.22: issue 42). The machine's load average is printed
before and after each run: on a machine shared with other work the two sides get
different shares of it, whatever ecoready does, and the ratio says that too.

    .venv/bin/python bench/bench_isolation.py [--pairs 1] [--time 10] [--arch amd64]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROW = "mariadb-10.11"
NOISE = 0.05  # twice judge/diff.py's NOISE_FLOOR
ROWS = """
[[components]]
id = "mariadb-10.11"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:10.11"

[[components]]
id = "mariadb-11.8"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:11.8"

[[components]]
id = "mysql-9.7"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mysql:9.7"
"""


LAB_SYSBENCH = "127.0.0.1:5000/lab/mariadb:10.11"  # the lab's MariaDB image carries sysbench


def run(matrix: Path, out: Path, *extra: str) -> dict[tuple[str, int], tuple[float, list[str]]]:
    """One headless run; (workload, threads) -> (median tps, what shared the host) of ROW."""
    exe = str(Path(sys.executable).with_name("ecoready"))
    argv = [exe, "run", "--headless", "--matrix", str(matrix), "--profile", "quick", "--json", str(out), *extra]
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    done = subprocess.run(argv, capture_output=True, text=True, timeout=3600, cwd=ROOT)
    after = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"  {'with others' if '--only' not in extra else 'alone'}: machine load {load} before, {after} after")
    if not out.exists():
        sys.exit(f"bench_isolation: the run wrote no report (exit {done.returncode}): {done.stderr[-2000:]}")
    report = json.loads(out.read_text())
    (cell,) = [c for c in report["cells"] if c["component"] == ROW]
    if not cell.get("bench"):
        sys.exit(f"bench_isolation: {cell['id']} has no bench ({cell['status']}: {cell['detail']})")
    return {
        (s["workload"], s["threads"]): (s["median_tps"], list(s.get("shared_with") or []))
        for s in cell["bench"]["series"]
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=1, help="A B pairs (default 1)")
    parser.add_argument("--time", type=int, default=10, help="seconds per sysbench run (quick: 10)")
    parser.add_argument("--arch", default="amd64")
    args = parser.parse_args()
    ratios: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-isolation-") as tmp:
        matrix = Path(tmp) / "rows.toml"
        matrix.write_text(
            f'arches = ["{args.arch}"]\n[sysbench]\nimage = "{LAB_SYSBENCH}"\ntime = {args.time}\n' + ROWS
        )
        for pair in range(1, args.pairs + 1):
            # A B, then B A: a drift of the machine's load lands on both sides
            if pair % 2:
                together = run(matrix, Path(tmp) / f"a{pair}.json")
                alone = run(matrix, Path(tmp) / f"b{pair}.json", "--only", ROW)
            else:
                alone = run(matrix, Path(tmp) / f"b{pair}.json", "--only", ROW)
                together = run(matrix, Path(tmp) / f"a{pair}.json")
            for key in sorted(set(together) & set(alone)):
                (a, beside), (b, _) = together[key], alone[key]
                ratio = a / b if b else float("nan")
                ratios.append(ratio)
                note = f"  (beside: {', '.join(beside)})" if beside else ""
                print(f"pair {pair} {key[0]:<24} {key[1]:>3} thr  with others {a:>10,.1f}  alone {b:>10,.1f}  "
                      f"ratio {ratio:.3f}{note}")  # fmt: skip
    if not ratios:
        print("bench_isolation: no point measured in both runs")
        return 1
    median = statistics.median(ratios)
    verdict = "within the noise" if abs(median - 1) <= NOISE else "BEYOND the noise"
    print(f"median ratio (with others / alone) over {len(ratios)} points: {median:.3f}: {verdict} (±{NOISE:.0%})")
    return 0 if abs(median - 1) <= NOISE else 1


if __name__ == "__main__":
    sys.exit(main())
