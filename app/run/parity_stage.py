"""The parity stage: a run's watcher of the events that compares each component's cells
across arches once all of them have finished, from the facts they gathered (no container
of its own), and says how many things it compared per component in the run's note.

The session passes every event through `see`, which returns the events to emit after it
(a `ParityCompared` when a component's last cell finishes; again when a cell re-runs).
The comparison itself is pure (`domain/parity.py`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ecoready.domain.events import (
    CellFinished,
    CellStarted,
    Event,
    FactsGathered,
    ParityCompared,
    RunNote,
    RunStarted,
)
from ecoready.domain.parity import Facet, Facts, compare, merged_facts, reference_arch

PARITY_ENV = "ECOREADY_PARITY"  # "off": no facts gathered, nothing compared (bench/parity.py measures the cost)
MAX_NAMED = 12  # components named in the run's note; the rest counted


def parity_wanted(environ: Mapping[str, str] | None = None) -> bool:
    value = (os.environ if environ is None else environ).get(PARITY_ENV, "").strip().lower()
    return value not in ("off", "0", "no", "false")


class ParityWatch:
    """Facts per cell, whole, until the cells of their component are compared."""

    def __init__(self) -> None:
        self._cells: dict[str, tuple[str, str]] = {}  # cell id -> (component, arch)
        self._facts: dict[str, dict[Facet, Facts]] = {}
        self._finished: set[str] = set()
        self._counts: dict[str, int] = {}  # component -> things compared (over its arches)

    def see(self, event: Event) -> list[Event]:
        if isinstance(event, RunStarted):
            self._cells = {c.cell_id: (c.component, c.arch) for c in event.cells}
        elif isinstance(event, CellStarted):
            self._facts.pop(event.cell_id, None)
            self._finished.discard(event.cell_id)
        elif isinstance(event, FactsGathered):
            self._facts[event.cell_id] = merged_facts(self._facts.get(event.cell_id, {}), event.facts)
        elif isinstance(event, CellFinished) and event.cell_id in self._cells:
            self._finished.add(event.cell_id)
            component = self._cells[event.cell_id][0]
            return self._compare(component)
        return []

    def _compare(self, component: str) -> list[Event]:
        ids = [cid for cid, (comp, _arch) in self._cells.items() if comp == component]
        if len(ids) < 2 or any(cid not in self._finished for cid in ids):
            return []
        with_facts = {self._cells[cid][1]: self._facts[cid] for cid in ids if self._facts.get(cid)}
        if len(with_facts) < 2:  # nothing to compare (now): a comparison made before no longer holds
            return [ParityCompared(component, {})] if self._counts.pop(component, None) is not None else []
        reference = reference_arch(sorted(with_facts))
        by_arch = {
            arch: compare(reference, with_facts[reference], facts)
            for arch, facts in sorted(with_facts.items())
            if arch != reference
        }
        self._counts[component] = sum(p.compared for p in by_arch.values())
        return [ParityCompared(component, by_arch)]

    def note(self) -> RunNote | None:
        """`parity: things compared per component across arches: mariadb-10.11 812, …`."""
        if not self._counts:
            return None
        named = [f"{component} {count}" for component, count in list(self._counts.items())[:MAX_NAMED]]
        more = len(self._counts) - len(named)
        tail = f" and {more} more" if more > 0 else ""
        return RunNote(f"parity: things compared per component across arches: {', '.join(named)}{tail}")
