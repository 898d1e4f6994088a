"""How cells share the machine: weighted slots sized from CPUs and memory, the longest
cells first, pulls outside the CPU slots, and exclusive benchmarks when numbers must be
clean.

An emulated cell costs several times the CPU of a native one (qemu-user), so cells take
slots by weight, not one each. Cells whose history (or probe kind) says they take longest
start first, so a long emulated Galera cluster does not begin last and stretch the run.
Pulls wait on the network, not the CPU, so the image stage runs outside the slots and
overlaps other cells' work. Slots go to the longest expected waiter first; shorter ones
fill the units it cannot use yet, if they are expected to be done before it can start
(backfilling: WeightedSlots).
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ecoready.domain.errors import ConfigError
from ecoready.domain.model import HostFacts, Profile
from ecoready.domain.reading import read_bounded
from ecoready.plan.cells import CellPlan

# Native seconds a cell of each probe kind took in the lab (start + smoke); "default" for
# the rest. Emulated cells take about EMULATED_SLOWDOWN times longer.
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
    "dump": 12.0,
    "toolkit": 25.0,
    "pmm": 60.0,
    "connector": 10.0,
}
UNIT_MEMORY = 1.5 * 2**30  # what one slot's worth of servers may use
PULLS_AT_ONCE = 4
MAX_HISTORY_BYTES = 64 << 20  # as a saved report (report/load.py)
# Emulated lab cells took 2.7-3.3x their native seconds (bench/matrix.py). The plan's
# EMULATION_FACTOR (6) is a margin for deadlines, not an estimate: ordering by it put a
# native Galera behind every emulated connector and left it running alone at the end.
EMULATED_SLOWDOWN = 3.0
# A native lab cell used 0.13-0.25 of a core on average over its life (it waits on a
# server starting, a join, a client), an emulated one 0.7-0.87 (qemu-user): measured per
# cell from the containers' cgroups. So an emulated cell weighs 3 and a CPU holds 5
# units: full, the host runs a little over its cores (the seconds every cell waits are
# CPU another can use), and three emulated cells plus a native one fit on two CPUs, so the
# end of a run, when only emulated cells are left, keeps the cores busy too.
UNITS_PER_CPU = 5
EMULATED_WEIGHT = 3


def weight(cell: CellPlan) -> int:
    """Units a cell takes: 1 native, EMULATED_WEIGHT emulated. A three-node cluster weighs
    no more: its nodes start one after another, and a native Galera cell used 0.2 of a
    core, an emulated one 0.87, like single servers."""
    return EMULATED_WEIGHT if cell.emulated else 1


def capacity(host: HostFacts | None) -> int:
    """Units of a host: UNITS_PER_CPU per CPU, within memory."""
    cpus = host.cpus if host and host.cpus else 2
    units = UNITS_PER_CPU * max(1, cpus)
    if host and host.memory_bytes:
        units = min(units, max(2, int(host.memory_bytes // UNIT_MEMORY)))
    return max(2, units)


def expected_seconds(cell: CellPlan, history: Mapping[str, float]) -> float:
    if cell.id in history:
        return history[cell.id]
    base = EXPECTED_SECONDS.get(cell.component.probe, EXPECTED_SECONDS["default"])
    return base * (EMULATED_SLOWDOWN if cell.emulated else 1.0)


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
            data = json.loads(read_bounded(path, MAX_HISTORY_BYTES, "report"))
            return {
                str(c["id"]): float(c["seconds"])
                for c in data.get("cells", [])
                if isinstance(c, dict) and isinstance(c.get("seconds"), (int, float)) and c["seconds"] > 0
            }
        except (ConfigError, ValueError, KeyError, TypeError, RecursionError):
            continue
    return {}


@dataclass(eq=False)
class Grant:
    """Units a cell holds, and when it is expected to give them back (event loop clock)."""

    units: int
    ends_at: float


@dataclass(eq=False)
class _Waiter:
    units: int
    expected: float  # seconds the cell is expected to hold the units
    seq: int
    future: asyncio.Future[Grant]


class WeightedSlots:
    """A semaphore whose holders take several units; waiters are served longest expected
    first, whatever order they asked in (image stages end in any order).

    When the first waiter does not fit, a later one that does may start in the units left
    (backfilling) only if it does not delay the first: it is expected to end before enough
    units come free for the first (from the holders' expected ends), or it takes units the
    first will not need then. So a heavy emulated Galera is not starved by a stream of light
    cells, and units do not sit idle while it waits. A holder past its expected end makes
    the wait open-ended: then nothing is let past on time, only into spare units.
    """

    def __init__(self, units: int) -> None:
        self.units = max(1, units)
        self._waiters: list[_Waiter] = []  # by (-expected, seq)
        self._holders: set[Grant] = set()
        self._seq = itertools.count()

    @property
    def free(self) -> int:
        return self.units - sum(grant.units for grant in self._holders)

    async def acquire(self, units: int, expected: float = 0.0) -> Grant:
        loop = asyncio.get_running_loop()
        waiter = _Waiter(min(max(1, units), self.units), expected, next(self._seq), loop.create_future())
        bisect.insort(self._waiters, waiter, key=lambda w: (-w.expected, w.seq))
        self._wake()
        try:
            return await waiter.future
        except asyncio.CancelledError:
            if waiter.future.done() and not waiter.future.cancelled():
                self.release(waiter.future.result())  # granted just as we were cancelled: give it back
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
                self._wake()  # it may have been the first, holding the others back
            raise

    def release(self, grant: Grant) -> None:
        self._holders.discard(grant)
        self._wake()

    def _grant(self, waiter: _Waiter, now: float) -> None:
        self._waiters.remove(waiter)
        grant = Grant(waiter.units, now + waiter.expected)
        self._holders.add(grant)
        waiter.future.set_result(grant)

    def _wake(self) -> None:
        now = asyncio.get_running_loop().time()
        self._waiters = [w for w in self._waiters if not w.future.done()]
        while self._waiters and self._waiters[0].units <= self.free:
            self._grant(self._waiters[0], now)
        if not self._waiters or self.free == 0:
            return
        shadow, spare = self._when_free(self._waiters[0].units, now)
        for waiter in list(self._waiters[1:]):
            if waiter.units > self.free:
                continue
            if now + waiter.expected <= shadow:
                self._grant(waiter, now)
            elif waiter.units <= spare:
                spare -= waiter.units
                self._grant(waiter, now)

    def _when_free(self, units: int, now: float) -> tuple[float, int]:
        """When `units` are expected to be free (from the holders' expected ends), and how
        many more than `units` are free then."""
        free = self.free
        for grant in sorted(self._holders, key=lambda g: g.ends_at):
            free += grant.units
            if free >= units:
                return max(grant.ends_at, now), free - units
        return now, max(0, free - units)


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
