"""Driver rows, cold and warm: the lab's driver rows run twice, the first time with no
install cached (the engine's `ecoready.cache=driver` images of those runtime images are
removed first), the second time from the cache. Prints each cell's start stage (the
install is in it) both times and the ratio of the sums; a warm run must install nothing.
Also `ecoready drivers` (the packaging question alone) over the same rows.

    .venv/bin/python bench/drivers.py [--arch amd64,arm64] [--keep-cache]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: bench/ and tests/ import as packages
from bench._measure import ecoready_exe

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "containers" / "lab.toml"


def driver_rows() -> list[str]:
    from ecoready.matrix.load import load

    return [c.id for c in load(LAB).components if "driver" in c.options]


def run(rows: list[str], arches: str, out: Path) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    argv = [ecoready_exe(), "run", "--headless", "--matrix", str(LAB), "--only", ",".join(rows), "--arch", arches]
    subprocess.run(
        [*argv, "--json", str(out)],
        check=False,
        capture_output=True,
        timeout=7200,
    )
    return json.loads(out.read_text()), time.monotonic() - started


def start_seconds(report: dict[str, Any]) -> dict[str, tuple[float, bool, str]]:
    """cell id -> (start stage seconds, from the cache, status)."""
    out = {}
    for cell in report["cells"]:
        start = next((s["seconds"] for s in cell["stages"] if s["stage"] == "start"), 0.0)
        cached = bool(cell["packaging"] and cell["packaging"]["cached"])
        out[cell["id"]] = (start, cached, cell["status"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", default="amd64,arm64")
    parser.add_argument("--keep-cache", action="store_true", help="do not empty the cache first (both runs warm)")
    args = parser.parse_args()
    rows = driver_rows()
    if not args.keep_cache:
        cached = subprocess.run(
            ["docker", "images", "-q", "--filter", "label=ecoready.cache=driver"], capture_output=True, text=True
        ).stdout.split()
        if cached:
            subprocess.run(["docker", "image", "rm", "-f", *sorted(set(cached))], capture_output=True, check=False)
        print(f"cache emptied ({len(set(cached))} image(s))")
    started = time.monotonic()
    subprocess.run([ecoready_exe(), "drivers", "--matrix", str(LAB), "--arch", args.arch], capture_output=True)
    print(f"ecoready drivers over {len(rows)} rows: {time.monotonic() - started:.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        cold, cold_wall = run(rows, args.arch, Path(tmp) / "cold.json")
        warm, warm_wall = run(rows, args.arch, Path(tmp) / "warm.json")
    first, second = start_seconds(cold), start_seconds(warm)
    print(f"{'cell':42} {'start cold':>11} {'start warm':>11}  warm from cache")
    for cid in first:
        print(f"{cid:42} {first[cid][0]:>10.1f}s {second[cid][0]:>10.1f}s  {second[cid][1]} ({second[cid][2]})")
    cold_sum, warm_sum = sum(v[0] for v in first.values()), sum(v[0] for v in second.values())
    print(f"whole runs: cold {cold_wall:.0f} s, warm {warm_wall:.0f} s")
    print(f"ratio: start stages cold/warm = {cold_sum / max(warm_sum, 0.1):.1f} ({cold_sum:.0f} s / {warm_sum:.0f} s)")
    if not all(v[1] for v in second.values()):
        print("warning: the warm run installed something again")


if __name__ == "__main__":
    main()
