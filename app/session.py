"""One run, wired together: matrix -> hosts -> plan -> runner -> events.

Both front ends use this: the headless path (cli) and the TUI pass an `emit` callback and
fold the events they get with `state.reduce`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from app.availability import registry_notes
from app.config import Matrix
from app.context import RunContext
from app.docker_host import DockerHost, this_owner
from app.errors import EnvironmentProblem
from app.events import Event, RegistryObserved, RunNote
from app.history import default_dir as default_history_dir
from app.images import ImageStore
from app.model import Profile, Status
from app.plan import EMULATION_FACTOR, Plan, make_plan
from app.platform import emulators
from app.registry import RegistryClient
from app.runner import Runner, to_the_end
from app.schedule import history_seconds
from app.secrets import Secrets
from app.specs import LABEL_CELL, LABEL_CREATED, LABEL_OWNER, LABEL_OWNER_START, LABEL_ROLE, LABEL_RUN

RESERVED_LABELS = frozenset({LABEL_RUN, LABEL_OWNER, LABEL_OWNER_START, LABEL_CELL, LABEL_CREATED, LABEL_ROLE})

log = logging.getLogger("ecoready.session")


@dataclass(frozen=True)
class RunOptions:
    only: Sequence[str] | None = None
    arches: Sequence[str] | None = None
    profile: Profile | None = None
    concurrency: int | None = None
    history: Path | None = None  # where previous reports are (for the longest-first order)


def extra_labels(text: str | None = None) -> dict[str, str]:
    """`ECOREADY_LABELS="k=v,k2=v2"`: labels added to every resource (e.g. a CI job id).
    ecoready's own `ecoready.*` keys cannot be overridden."""
    raw = os.environ.get("ECOREADY_LABELS", "") if text is None else text
    labels: dict[str, str] = {}
    for item in raw.split(","):
        key, sep, value = item.strip().partition("=")
        if not sep or not key:
            continue
        if key in RESERVED_LABELS:
            raise EnvironmentProblem(f"ECOREADY_LABELS cannot set {key}: ecoready sets it")
        labels[key.strip()] = value.strip()
    return labels


def usable_emulators() -> dict[str, str]:
    """arch -> description of emulators that can run containers of that arch here."""
    out: dict[str, str] = {}
    for arch, emulator in emulators().items():
        if emulator.problem() is None:
            out[arch] = emulator.version or emulator.interpreter
    return out


class Session:
    def __init__(self, matrix: Matrix, options: RunOptions, emit: Callable[[Event], None]) -> None:
        self.matrix = matrix
        self.options = options
        self.emit = emit
        self.run_id = uuid.uuid4().hex
        self.secrets = Secrets()
        self.host: DockerHost | None = None
        self.registry: RegistryClient | None = None
        self.images: ImageStore | None = None
        self.plan: Plan | None = None
        self.runner: Runner | None = None

    async def open(self) -> Plan:
        """Connect to the engine (exit 3 when unreachable), sweep dead runs' leftovers, plan."""
        url = self.matrix.hosts[0].docker if self.matrix.hosts else ""
        name = self.matrix.hosts[0].name if self.matrix.hosts else "local"
        self.host = await DockerHost.connect(name, url)
        facts = await self.host.facts(usable_emulators() if not url else {})
        if self.matrix.hosts:
            spec = self.matrix.hosts[0]
            facts = replace(facts, price_per_hour=spec.price_per_hour, cpu_ghz=spec.cpu_ghz)
        swept = await self.host.sweep(dead_owners=True)
        if swept.total:
            self.emit(RunNote(f"removed {swept.total} resource(s) left by ecoready runs that died"))
        self.plan = make_plan(
            self.matrix, [facts], only=self.options.only, arches=self.options.arches, profile=self.options.profile
        )
        if not self.plan.cells:
            raise EnvironmentProblem("nothing to run: no component matches --only/--arch")
        self.registry = RegistryClient(
            mirror=self.matrix.registry.mirror,
            insecure=self.matrix.registry.insecure,
            on_status=lambda status: self.emit(RegistryObserved(status)),
        )
        self.images = ImageStore(self.host, self.registry)
        run = RunContext(
            run_id=self.run_id,
            host=self.host,
            owner=this_owner(),
            secrets=self.secrets,
            images=self.images,
            emit=self.emit,
            emulation_factor=EMULATION_FACTOR,
            extra_labels=extra_labels(),
            hosts={h.name: h for h in self.plan.hosts},
        )
        # No --concurrency: weighted slots sized from the host (app/schedule.py).
        concurrency = self.options.concurrency or self.matrix.concurrency
        history = history_seconds(self.options.history or default_history_dir())
        self.runner = Runner(self.plan, run, concurrency=concurrency, finishing=self._registry_summary, history=history)
        return self.plan

    def _registry_summary(self) -> None:
        """Each registry as last seen (with its request count), and one note per registry
        that could not be asked, instead of the same reason on every cell."""
        if self.registry is None or self.images is None:
            return
        for status in self.registry.statuses():
            self.emit(RegistryObserved(status))
        for note in registry_notes(self.images.unchecked):
            self.emit(RunNote(note))

    async def run(self) -> None:
        if self.runner is None:
            await self.open()
        assert self.runner is not None
        await self.runner.run_all()

    async def rerun(self, cell_ids: Iterable[str]) -> None:
        """Run these cells again in this open session: same run id, labels, secrets and
        pulled images; only their events are emitted (CellStarted ... CellFinished)."""
        if self.runner is None:
            raise EnvironmentProblem("nothing to re-run: the session is not open")
        await self.runner.run_cells(cell_ids)

    async def close(self) -> None:
        """Stop cells still under way, sweep everything labelled with the run id, disconnect."""
        try:
            if self.runner is not None:
                await to_the_end(self.runner.close())
        finally:
            if self.registry is not None:
                await self.registry.aclose()
            if self.host is not None:
                await self.host.close()


def exit_code(statuses: Sequence[Status]) -> int:
    """0 all ready; 3 when the tool or infrastructure failed a cell; 1 otherwise."""
    if any(s is Status.ERROR for s in statuses):
        return 3
    if all(s is Status.READY for s in statuses):
        return 0
    return 1


async def run_to_end(session: Session) -> bool:
    """Run the session; False when it was cancelled (the caller still has the events)."""
    try:
        await session.run()
        return True
    except asyncio.CancelledError:
        return False
