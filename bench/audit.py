#!/usr/bin/env python3
"""The build audit per image and arch of the lab matrix: cold (the programs read from the
engine and parsed, as the audit stage does on a cache miss) against cached (the same audit
answered from the disk cache), median of N each, side by side in one run. Target: a cold
audit under 5 s per image per arch.

    .venv/bin/python bench/audit.py [--runs 3] [--matrix containers/lab.toml]

The lab must be built (`ecoready lab build`, gaps included); images are resolved in the lab
registry and pulled as a run would (a no-op when the engine has them). Run on a quiet
machine: the audit competes with whatever else runs for the two cores.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: bench/ and tests/ import as packages

from ecoready.domain.errors import ImageUnavailable
from ecoready.domain.images import ImageInfo
from ecoready.engine.docker_host import DockerHost
from ecoready.engine.owners import this_owner
from ecoready.matrix.kinds import KINDS
from ecoready.matrix.load import load
from ecoready.probe_api.run_context import RunContext
from ecoready.probe_api.secrets import Secrets
from ecoready.registry.client import RegistryClient
from ecoready.registry.image_store import ImageStore
from ecoready.run.audit_stage import AuditCache, Auditor


async def timed_audit(run: RunContext, auditor: Auditor, info: ImageInfo, programs) -> tuple[float, str]:
    began = time.perf_counter()
    try:
        detail = await auditor.audit(run, "bench/" + info.arch, "local", info, programs)
    except Exception as exc:  # a mislabelled binary fails the stage: still an audit done
        detail = str(exc)
    return time.perf_counter() - began, detail


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--matrix", default="containers/lab.toml")
    args = parser.parse_args()
    matrix = load(args.matrix)
    wanted = sorted(
        {
            (c.image, arch, KINDS[c.probe].programs)
            for c in matrix.components
            if KINDS[c.probe].programs
            for arch in (c.arches or matrix.arches)
        }
    )
    host = await DockerHost.connect()
    registry = RegistryClient(insecure=matrix.registry.insecure, cache=False)
    run = RunContext("bench-audit", host, this_owner(), Secrets(), ImageStore(host, registry), lambda _event: None)
    rows = []
    try:
        with tempfile.TemporaryDirectory() as kept:
            for reference, arch, programs in wanted:
                try:
                    info = await run.images.ensure(reference, arch)
                except ImageUnavailable:  # the gaps: not published for this arch
                    continue
                cold, warm, detail = [], [], ""
                for _ in range(args.runs):
                    seconds, detail = await timed_audit(run, Auditor(run.emit, AuditCache(None)), info, programs)
                    cold.append(seconds)
                    cache = AuditCache(Path(kept))
                    await timed_audit(run, Auditor(run.emit, cache), info, programs)  # fills it
                    warm.append((await timed_audit(run, Auditor(run.emit, cache), info, programs))[0])
                name = reference.rsplit("/", 1)[-1]
                rows.append((name, arch, statistics.median(cold), statistics.median(warm), detail))
    finally:
        await registry.aclose()
        await host.close()
    print(f"{'image':28} {'arch':6} {'cold s':>7} {'cached ms':>10}  audit")
    for image, arch, cold_s, warm_s, detail in rows:
        print(f"{image:28} {arch:6} {cold_s:7.2f} {warm_s * 1000:10.1f}  {detail[:90]}")
    slowest = max(rows, key=lambda r: r[2])
    print(
        f"ratio: slowest cold audit {slowest[2]:.2f} s ({slowest[0]} {slowest[1]}) / 5 s target = "
        f"{slowest[2] / 5:.2f}; cached: at most {max(r[3] for r in rows) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    asyncio.run(main())
