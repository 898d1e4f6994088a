"""`ecoready --help` and `ecoready validate matrix.toml` process times against `python -c
pass`, measured side by side in one run (interleaved, median of N). Targets: --help under
0.3 s and within 4x of `python -c pass`.

    .venv/bin/python bench/startup.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: bench/ and tests/ import as packages
from bench._measure import ecoready_exe

ROOT = Path(__file__).resolve().parents[1]


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "ecoready --help": [ecoready_exe(), "--help"],
        "ecoready validate matrix.toml": [ecoready_exe(), "validate", "matrix.toml"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for argv in commands.values():  # warm the page cache once
        timed(argv)
    for _ in range(args.repeat):
        for name, argv in commands.items():  # interleaved: A B C A B C ...
            times[name].append(timed(argv))
    base = statistics.median(times["python -c pass"])
    print(f"{'command':32} {'median s':>9} {'min s':>7} {'x python':>9}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:32} {median:9.3f} {min(values):7.3f} {median / base:9.2f}")
    help_s = statistics.median(times["ecoready --help"])
    print(
        f"ratio: ecoready --help = {help_s:.3f} s = {help_s / base:.2f}x python -c pass "
        f"(targets: < 0.3 s, <= 4x) -> {'OK' if help_s < 0.3 and help_s / base <= 4 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
