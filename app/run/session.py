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
from dataclasses import dataclass, field, replace
from pathlib import Path

from ecoready.domain.blame import Cause, Shared, Trouble
from ecoready.domain.errors import EcoreadyError, EnvironmentProblem
from ecoready.domain.events import Event, PlatformObserved, RegistryObserved, RunNote
from ecoready.domain.model import Component, Profile, Status
from ecoready.domain.specs import LABEL_CELL, LABEL_CREATED, LABEL_OWNER, LABEL_OWNER_START, LABEL_ROLE, LABEL_RUN
from ecoready.engine.aio import to_the_end
from ecoready.engine.owners import this_owner
from ecoready.engine.platform import emulators
from ecoready.judge.history import default_dir as default_history_dir
from ecoready.matrix.document import Matrix
from ecoready.packages.client import PackageClient
from ecoready.plan.cells import EMULATION_FACTOR, Plan, make_plan, refuse_unserved
from ecoready.plan.schedule import history_seconds
from ecoready.probe_api.run_context import RunContext
from ecoready.probe_api.secrets import Secrets
from ecoready.registry.availability import registry_notes
from ecoready.registry.client import RegistryClient
from ecoready.registry.image_store import ImageStore
from ecoready.run.emulation import EngineMemory
from ecoready.run.fitness import hazards
from ecoready.run.hosts import ArchNeeds, Engine, close_all, connect_all, host_specs, learn_facts, unreachable_facts
from ecoready.run.parity_stage import ParityWatch, parity_wanted
from ecoready.run.runner import Runner, load_probe
from ecoready.run.survey import ask

RESERVED_LABELS = frozenset({LABEL_RUN, LABEL_OWNER, LABEL_OWNER_START, LABEL_CELL, LABEL_CREATED, LABEL_ROLE})

log = logging.getLogger("ecoready.session")


@dataclass(frozen=True)
class RunOptions:
    only: Sequence[str] | None = None
    arches: Sequence[str] | None = None
    profile: Profile | None = None
    concurrency: int | None = None
    history: Path | None = None  # where previous reports are (for the longest-first order)
    parity: bool = field(default_factory=parity_wanted)  # compare each component's arches (run/parity_stage.py)


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


class Session:
    """One run over every host of the matrix: each host gets its own engine connection,
    image store and concurrency limit; one run id, one registry client, one event stream."""

    def __init__(self, matrix: Matrix, options: RunOptions, emit: Callable[[Event], None]) -> None:
        self.matrix = matrix
        self.options = options
        self._emit_out = emit
        self.parity = ParityWatch() if options.parity else None
        self.run_id = uuid.uuid4().hex
        self.secrets = Secrets()
        self.registry: RegistryClient | None = None
        self.packages: PackageClient | None = None  # package registries (driver rows)
        self.plan: Plan | None = None
        self.runner: Runner | None = None
        self.engines: list[Engine] = []
        self.runs: dict[str, RunContext] = {}
        self.memory = EngineMemory()  # what engines answered before about the arches they run

    def emit(self, event: Event) -> None:
        """Every event out, and after it what parity makes of it (a component compared)."""
        self._emit_out(event)
        for more in self.parity.see(event) if self.parity is not None else ():
            self._emit_out(more)

    async def open(self) -> Plan:
        """Connect to every host at once (exit 3 when none answers), sweep dead runs'
        leftovers on each, learn what each serves, plan."""
        self.engines = await connect_all(host_specs(self.matrix.hosts))
        reachable = [e for e in self.engines if e.host is not None]
        if not reachable:
            raise EnvironmentProblem(self._none_reachable())
        self.registry = RegistryClient.for_settings(
            self.matrix.registry,
            on_status=lambda status: self.emit(RegistryObserved(status)),
        )
        self.packages = PackageClient(on_status=lambda status: self.emit(RegistryObserved(status)))
        owner, labels = this_owner(), extra_labels()
        for engine in reachable:
            assert engine.host is not None
            self.runs[engine.spec.name] = RunContext(
                run_id=self.run_id,
                host=engine.host,
                owner=owner,
                secrets=self.secrets,
                images=ImageStore(engine.host, self.registry),
                emit=self.emit,
                emulation_factor=EMULATION_FACTOR,
                extra_labels=labels,
                load_probe=load_probe,
                packages=self.packages,
                parity=self.options.parity,
            )
        await self._sweep_dead_runs(reachable)
        wanted = tuple(self.options.arches or self.matrix.arches)
        needs = {arch: ArchNeeds(tuple(self._images_for(arch)), tuple(self._kinds_for(arch))) for arch in wanted}
        learned = await learn_facts(self.engines, self.runs, needs, emulators, self.memory)
        for engine in self.engines:
            if engine.spec.name in learned:
                engine.learn(learned[engine.spec.name])
        for engine in self.engines:
            if engine.host is None and engine.spec.name in self.runs:  # lost while asked for its facts
                del self.runs[engine.spec.name]
        if not self.runs:
            raise EnvironmentProblem(self._none_reachable())
        first_name = next(iter(self.runs))  # the default context: the first host that answered
        first = self.runs[first_name]
        facts = [e.facts if e.facts is not None and not e.error else unreachable_facts(e) for e in self.engines]
        refuse_unserved(self.options.arches or (), facts)
        self.plan = make_plan(
            self.matrix, facts, only=self.options.only, arches=self.options.arches, profile=self.options.profile
        )
        if not self.plan.cells:
            raise EnvironmentProblem("nothing to run: no component matches --only/--arch")
        facts_by_name = {h.name: h for h in self.plan.hosts}
        for run in self.runs.values():  # what the bench stage needs to know of each host
            run.hosts = facts_by_name
        # Cells at once per host: --concurrency, else the host's own, else the matrix's; none
        # of them: weighted slots sized from the host's CPUs and memory (app/plan/schedule.py).
        limits = {
            e.spec.name: limit
            for e in self.engines
            if e.spec.name in self.runs
            and (limit := self.options.concurrency or e.spec.concurrency or self.matrix.concurrency)
        }
        self.runner = Runner(
            self.plan,
            first,
            concurrency=limits.get(first_name),
            finishing=self._finishing,
            history=history_seconds(self.options.history or default_history_dir()),
            hosts=self.runs,
            limits=limits,
            side_tasks=(self._survey_platforms,),
        )
        return self.plan

    def _none_reachable(self) -> str:
        if len(self.engines) == 1:
            return self.engines[0].error
        return "no docker engine could be reached: " + "; ".join(
            f"{e.spec.name}: {e.error}" for e in self.engines if e.error
        )

    async def _sweep_dead_runs(self, engines: Sequence[Engine]) -> None:
        """Leftovers of runs that died (kill -9), on every host, before this run adds its own."""

        async def one(engine: Engine) -> None:
            assert engine.host is not None
            try:
                swept = await engine.host.sweep(dead_owners=True)
            except EcoreadyError as exc:
                self.emit(RunNote(f"host {engine.spec.name}: the sweep of dead runs failed: {exc}"))
                return
            if swept.total:
                where = f" on host {engine.spec.name}" if len(self.engines) > 1 else ""
                self.emit(RunNote(f"removed {swept.total} resource(s) left by ecoready runs that died{where}"))

        await asyncio.gather(*(one(e) for e in engines))

    def _wanted_components(self, arch: str) -> list[Component]:
        only = set(self.options.only) if self.options.only else None
        return [
            c
            for c in self.matrix.components
            if (only is None or c.id in only) and arch in (c.arches or self.matrix.arches)
        ]

    def _images_for(self, arch: str, host: str | None = None) -> list[str]:
        """Images to survey a platform with: those of the cells planned there (else those
        of the matrix for the arch), in matrix order; the cells pull them anyway."""
        if host is not None and self.plan is not None:
            refs = [c.component.image for c in self.plan.cells if c.host == host and c.arch == arch]
            if refs:
                return refs
        return [c.image for c in self._wanted_components(arch)]

    def _kinds_for(self, arch: str, host: str | None = None) -> list[str]:
        if host is not None and self.plan is not None:
            return [c.component.probe for c in self.plan.cells if c.host == host and c.arch == arch]
        return [c.probe for c in self._wanted_components(arch)]

    async def _survey_platforms(self) -> None:
        """Platform fitness of every (host, arch) the plan uses, alongside the cells; the
        notes and surveys of the host checks made before planning come out first."""
        assert self.plan is not None
        for engine in self.engines:
            for note in engine.notes:
                self.emit(RunNote(note))
            if engine.host is None and engine.error:
                self.emit(RunNote(f"host {engine.spec.name} could not be reached: {engine.error}"))
        pairs = list(dict.fromkeys((c.host, c.arch, c.emulated) for c in self.plan.cells if not c.unrunnable))
        done = {(e.spec.name, arch): f for e in self.engines for arch, f in e.surveyed.items()}

        async def one(host: str, arch: str, emulated: bool) -> None:
            fitness = done.get((host, arch))
            if fitness is None or fitness.error:
                run = self.runs[host]
                answer = await ask(
                    run, arch, emulated=emulated, images=self._images_for(arch, host), kinds=self._kinds_for(arch, host)
                )
                fitness = answer.fitness
                if answer.cause is Cause.EMULATOR:  # what the engine answered before is no longer true
                    self.memory.forget(run.host.identity.engine_id, arch)
            else:
                fitness = replace(fitness, hazards=hazards(fitness, self._kinds_for(arch, host)))
            self.emit(PlatformObserved(fitness))
            if self.runner is not None:  # the build audits of that platform's cells, crossed with it
                self.runner.auditor.observe(fitness)

        await asyncio.gather(*(one(*pair) for pair in pairs if pair[0] in self.runs))

    def _finishing(self) -> None:
        """Run-wide events before RunFinished: the registries, what parity compared."""
        self._registry_summary()
        note = self.parity.note() if self.parity is not None else None
        if note is not None:
            self.emit(note)

    def _registry_summary(self) -> None:
        """Each registry as last seen (with its request count), and one note per registry
        that could not be asked, instead of the same reason on every cell."""
        if self.registry is None:
            return
        for status in (*self.registry.statuses(), *(self.packages.statuses() if self.packages else ())):
            self.emit(RegistryObserved(status))
        unchecked: dict[str, tuple[int, str]] = {}
        for run in self.runs.values():
            for registry, (count, reason) in run.images.unchecked.items():
                before, _ = unchecked.get(registry, (0, ""))
                unchecked[registry] = (before + count, reason)
        for registry, counted in sorted(unchecked.items()):  # the trouble the run's cells say too
            (note,) = registry_notes({registry: counted})
            self.emit(RunNote(note, Trouble(Shared.REGISTRY, registry)))

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
            if self.packages is not None:
                await self.packages.aclose()
            await close_all(self.engines)


def exit_code(statuses: Sequence[Status]) -> int:
    """0 all ready; 3 when the tool or infrastructure failed a cell; 1 otherwise."""
    if any(s is Status.ERROR for s in statuses):
        return 3
    if all(s is Status.READY for s in statuses):
        return 0
    return 1
