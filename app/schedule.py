"""How cells share the machine: weighted slots sized from CPUs and memory, the longest
cells first, pulls outside the CPU slots, and exclusive benchmarks when numbers must be
clean.

An emulated cell costs several times the CPU of a native one (qemu-user), and a cluster
starts three servers, so cells take slots by weight, not one each. Cells whose history (or
probe kind) says they take longest start first, so a long emulated Galera cluster does
not begin last and stretch the run. Pulls wait on the network, not the CPU, so the image
stage runs outside the slots and overlaps other cells' work.
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from app.model import HostFacts, Profile
from app.plan import EMULATION_FACTOR, CellPlan

# Native seconds a cell of each probe kind took in the lab (start + smoke); "default" for
# the rest. Emulated cells take about EMULATION_FACTOR times longer.
EXPECTED_SECONDS: Mapping[str, float] = {
    "default": 8.0,
    "server": 5.0,
    "galera": 45.0,
    "pxc": 60.0,
    "group-replication": 60.0,
    "replication": 10.0,
    "mariabackup": 10.0,
    "xtrabackup": 20.0,
    "mydumper": 12.0,
    "toolkit": 25.0,
    "pmm": 60.0,
    "connector": 10.0,
}
CLUSTER_KINDS = frozenset({"galera", "pxc", "group-replication"})
UNIT_MEMORY = 1.5 * 2**30  # what one slot's worth of servers may use
PULLS_AT_ONCE = 4
UNITS_PER_CPU = 3


def weight(cell: CellPlan) -> int:
    """Slots a cell takes: 2 when emulated (qemu burns CPU), one more for a three-node
    cluster (its nodes start one after another, so it is busier, not three times busier)."""
    units = 2 if cell.emulated else 1
    if cell.component.probe in CLUSTER_KINDS:
        units += 1
    return units


def capacity(host: HostFacts | None) -> int:
    """Slots of a host: three per CPU, within memory. Cells spend much of their time waiting
    (a server starting, a readiness poll, a smoke client): at two per CPU the lab matrix
    left a third of the CPU idle (bench/matrix.py, docs/performance.md)."""
    cpus = host.cpus if host and host.cpus else 2
    units = UNITS_PER_CPU * max(1, cpus)
    if host and host.memory_bytes:
        units = min(units, max(2, int(host.memory_bytes // UNIT_MEMORY)))
    return max(2, units)


def expected_seconds(cell: CellPlan, history: Mapping[str, float]) -> float:
    if cell.id in history:
        return history[cell.id]
    base = EXPECTED_SECONDS.get(cell.component.probe, EXPECTED_SECONDS["default"])
    return base * (EMULATION_FACTOR if cell.emulated else 1.0)


def longest_first(cells: Sequence[CellPlan], history: Mapping[str, float]) -> list[CellPlan]:
    """Execution order: the longest expected cells first (stable for equal estimates)."""
    return sorted(cells, key=lambda c: -expected_seconds(c, history))


def history_seconds(directory: Path | None) -> dict[str, float]:
    """Seconds per cell id from the newest report in a history folder (empty if none).
    Read leniently: an estimate, never a reason to fail a run."""
    if directory is None or not directory.is_dir():
        return {}
    reports = sorted(directory.glob("*.json"), reverse=True)
    for path in reports[:3]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return {
                str(c["id"]): float(c["seconds"])
                for c in data.get("cells", [])
                if isinstance(c, dict) and isinstance(c.get("seconds"), (int, float)) and c["seconds"] > 0
            }
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return {}


class WeightedSlots:
    """A semaphore whose holders take several units. Waiters are served in order, but one
    that fits may overtake a head that does not (a native cell beside an emulated cluster
    that holds most units), at most OVERTAKES times per head, so a heavy cell is not
    starved by a stream of light ones."""

    OVERTAKES = 8

    def __init__(self, units: int) -> None:
        self.units = max(1, units)
        self.free = self.units
        self._waiters: collections.deque[tuple[int, asyncio.Future[None]]] = collections.deque()
        self._overtaken = 0  # times the current head of the queue was overtaken

    def _wake(self) -> None:
        while self._waiters and self._waiters[0][1].done():
            self._waiters.popleft()  # cancelled
            self._overtaken = 0
        for units, future in list(self._waiters):
            if self.free == 0:
                return
            if future.done() or units > self.free:
                continue
            head = future is self._waiters[0][1]
            if not head and self._overtaken >= self.OVERTAKES:
                return
            self.free -= units
            self._waiters.remove((units, future))
            future.set_result(None)
            self._overtaken = 0 if head else self._overtaken + 1

    async def acquire(self, units: int) -> int:
        units = min(max(1, units), self.units)
        if units <= self.free and (not self._waiters or self._overtaken < self.OVERTAKES):
            self.free -= units
            if self._waiters:
                self._overtaken += 1
            return units
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((units, future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release(units)  # granted just as we were cancelled: give it back
            raise
        return units

    def release(self, units: int) -> None:
        self.free = min(self.units, self.free + units)
        self._wake()

    @asynccontextmanager
    async def hold(self, units: int) -> AsyncIterator[int]:
        taken = await self.acquire(units)
        try:
            yield taken
        finally:
            self.release(taken)


@dataclass
class Scheduler:
    """The slots of one run: CPU slots and pull slots. (Which stages must run alone is the
    plan's decision: `CellPlan.exclusive`.)"""

    slots: WeightedSlots
    pulls: asyncio.Semaphore
    fixed: bool  # the user set --concurrency: every cell weighs 1

    @classmethod
    def for_run(cls, hosts: Iterable[HostFacts], profile: Profile, concurrency: int | None) -> Scheduler:
        facts = next(iter(hosts), None)
        units = concurrency if concurrency else capacity(facts)
        return cls(WeightedSlots(units), asyncio.Semaphore(PULLS_AT_ONCE), fixed=concurrency is not None)

    def weight(self, cell: CellPlan) -> int:
        return 1 if self.fixed else weight(cell)
