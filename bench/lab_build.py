#!/usr/bin/env python3
"""A cold build of every lab image for both arches, as a fresh machine does it, in an engine
of its own: a second dockerd with its own throw-away data directory (nothing of the
machine's engine is used or touched: not its images, not its build cache), and a lab folder
of its own (no build history, so the steps are ordered as on a first build). Nothing is
published. Prints the minutes and what each step cost (bases, the builder, every image).

    sudo .venv/bin/python bench/lab_build.py [--arch amd64,arm64] [--jobs N] [--keep]

Needs what `make setup` and `make test-host` install (dockerd, debootstrap, the arm64
emulator, openssl). Takes the machine's cores for the whole build: run it alone.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: bench/ and tests/ import as packages
from tests.support.second_engine import SecondEngine


async def build(engine: SecondEngine, lab_dir: Path, arches: list[str]) -> float:
    from ecoready.engine.docker_host import DockerHost
    from ecoready.lab.build import Lab
    from ecoready.lab.recipes import IMAGES

    started = time.monotonic()

    def log(line: str) -> None:
        print(f"[{time.monotonic() - started:6.0f} s] {line}", flush=True)

    host = await DockerHost.connect("bench", engine.unix_url)
    try:
        await Lab(host, log, lab_dir=lab_dir).build_images(IMAGES, arches)
    finally:
        await host.close()
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="amd64,arm64", help="comma-separated (default: amd64,arm64)")
    parser.add_argument("--jobs", type=int, default=0, help="builds at once (default: two per core)")
    parser.add_argument("--keep", action="store_true", help="keep the engine's data directory (printed)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench/lab_build.py: run as root (it starts a dockerd)", file=sys.stderr)
        return 2
    # an interrupted bench still stops its engine and removes its data (the `finally` below)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.jobs:
        os.environ["ECOREADY_LAB_JOBS"] = str(args.jobs)
    # under /var/lib (the disk docker uses), a short path: unix socket paths are limited
    root = Path(tempfile.mkdtemp(prefix="lab-bench-", dir="/var/lib/ecoready"))
    engine = SecondEngine(root)
    try:
        engine.start()
        seconds = asyncio.run(build(engine, root / "lab", args.arch.split(",")))
        print(f"cold lab build ({args.arch}, {os.cpu_count()} cores): {seconds / 60:.1f} min")
    finally:
        engine.close()
        if args.keep:
            print(f"kept: {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
