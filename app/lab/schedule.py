"""How the lab's builds share the machine, and what each one cost.

Every build step (a debootstrap and its base image, a builder, a component image) takes a
slot; there are as many slots as cores, because an emulated build keeps about one core
busy (qemu runs the maintainer scripts, or debootstrap's dpkg, on one thread). Steps start longest chain
first: an image whose base is not built yet counts the base's time too, so the arm64 sid
base and MySQL on it do not end up last while a core idles. What a step is expected to
take comes from the last build on this machine (`build-times.json` in the lab folder),
else from the figures measured on the reference 2-core machine below.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import json
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from ecoready.domain.errors import ConfigError
from ecoready.domain.reading import read_bounded

# Seconds measured cold on the reference machine (2 cores, qemu 10 for arm64; bench/lab_build.py
# of 2026-11-26, docs/performance.md): the order of a first build. Steps not listed count DEFAULT_S.
REFERENCE_S: dict[tuple[str, str], float] = {
    ("builder connectors-builder", "amd64"): 149.0,
    ("base bookworm", "arm64"): 138.0,
    ("base trixie", "arm64"): 128.0,
    ("connectors:bookworm", "arm64"): 123.0,
    ("base sid", "arm64"): 110.0,
    ("mysql:9.7", "arm64"): 88.0,
    ("connectors:bookworm", "amd64"): 58.0,
    ("base bookworm", "amd64"): 52.0,
    ("mariadb:11.8", "arm64"): 51.0,
    ("mariadb:10.11", "arm64"): 50.0,
    ("base sid", "amd64"): 47.0,
    ("mysql:9.7", "amd64"): 44.0,
    ("base trixie", "amd64"): 43.0,
    ("mariadb:11.8", "amd64"): 38.0,
    ("mariadb:10.11", "amd64"): 36.0,
    ("tools:bookworm", "arm64"): 33.0,
    ("tools:bookworm", "amd64"): 31.0,
    ("app-client:1", "arm64"): 23.0,
    ("app-client:1", "amd64"): 16.0,
}
DEFAULT_S = {"emulated": 45.0, "native": 25.0}


@dataclass(frozen=True)
class StepCost:
    step: str  # "base bookworm", "builder connectors-builder", "mariadb:10.11"
    arch: str
    seconds: float
    emulated: bool
    built: bool  # False: the cached image was current


def build_slots() -> int:
    """Two builds per core (`ECOREADY_LAB_JOBS` overrides). A step waits part of its time
    (downloads, the engine committing and copying layers): with one build per core the
    cores sat 15 % idle and the cold lab took 13.9 min on 2 cores, with two 10.5 min
    (docs/performance.md)."""
    wanted = os.environ.get("ECOREADY_LAB_JOBS", "")
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted)
    return 2 * max(1, len(os.sched_getaffinity(0)))


class BuildBook:
    """The slots, the costs of this build, and the times of the last one."""

    def __init__(self, lab_dir: Path, slots: int) -> None:
        self._path = lab_dir / "build-times.json"
        self._free = slots
        self._waiting: list[tuple[float, int, asyncio.Future[None]]] = []  # a heap: highest priority first
        self._count = itertools.count()  # equal priorities: first come, first served
        self.costs: list[StepCost] = []
        self._last = _read_times(self._path)

    @asynccontextmanager
    async def slot(self, priority: float = 0.0) -> AsyncIterator[None]:
        """A slot, waiters served by `priority` (the seconds of work still ahead of the
        chain the step belongs to), not by arrival: a base asked for early must not hold
        back a long image whose base is ready."""
        if self._free > 0 and not self._waiting:
            self._free -= 1
        else:
            granted = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiting, (-priority, next(self._count), granted))
            try:
                await granted
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():
                    self._release()  # granted as it was cancelled: pass it on
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        while self._waiting:
            _, _, waiter = heapq.heappop(self._waiting)
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1

    def expected(self, step: str, arch: str, emulated: bool) -> float:
        key = f"{step}/{arch}"
        if key in self._last:
            return self._last[key]
        return REFERENCE_S.get((step, arch), DEFAULT_S["emulated" if emulated else "native"])

    def record(self, cost: StepCost) -> None:
        self.costs.append(cost)

    def save(self) -> None:
        """Remember what was built this time (a cached step says nothing of a cold one)."""
        times = dict(self._last)
        times.update({f"{c.step}/{c.arch}": round(c.seconds, 1) for c in self.costs if c.built})
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._path.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n")
        except OSError:
            pass  # only the next build's order suffers


def _read_times(path: Path) -> dict[str, float]:
    try:
        data = json.loads(read_bounded(path, 1 << 20, "build times file"))
    except (ConfigError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def cost_table(costs: Sequence[StepCost], wall_s: float) -> list[str]:
    """What each step cost, slowest first, and the sums of emulated and native work."""
    built = sorted((c for c in costs if c.built), key=lambda c: -c.seconds)
    if not built:
        return [f"lab: nothing to build ({len(costs)} step(s) current) in {wall_s:.0f} s"]
    width = max(len(c.step) for c in built)
    lines = [f"lab: {'step':<{width}}  arch    seconds"]
    for cost in built:
        how = "emulated" if cost.emulated else "native"
        lines.append(f"lab: {cost.step:<{width}}  {cost.arch:<6} {cost.seconds:8.0f}  {how}")
    emulated = sum(c.seconds for c in built if c.emulated)
    native = sum(c.seconds for c in built if not c.emulated)
    lines.append(
        f"lab: {len(built)} step(s) built in {wall_s / 60:.1f} min ({emulated:.0f} s emulated, {native:.0f} s native"
        f" build time), {len(costs) - len(built)} reused"
    )
    return lines
