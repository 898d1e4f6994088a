"""The run's Docker hosts: connect every [[hosts]] entry at once (each under a deadline),
learn what each serves, and give each its own context (DockerHost, ImageStore) so pulls,
labels, sweeps and cleanup happen per host.

What a host serves: its native arch (from the engine), plus the arches it can emulate
when `emulate = true` (the default) or when `arches` lists them, asked of the engine
itself, local or remote (app/run/emulation.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ecoready.domain.errors import EcoreadyError
from ecoready.domain.model import Host, HostFacts, PlatformFitness
from ecoready.domain.text import one_line
from ecoready.engine.docker_host import DockerHost
from ecoready.engine.platform import Emulator
from ecoready.probe_api.run_context import RunContext
from ecoready.run.emulation import EngineMemory, find_emulation

LOCAL = Host(name="local")


@dataclass
class Engine:
    """One [[hosts]] entry as this run found it."""

    spec: Host
    host: DockerHost | None = None
    facts: HostFacts | None = None
    error: str = ""  # why it could not be reached
    notes: list[str] = field(default_factory=list)
    # platform fitness learned while checking its emulators (emitted once the run starts)
    surveyed: dict[str, PlatformFitness] = field(default_factory=dict)

    def learn(self, learned: Learned) -> None:
        """Take what `learn_facts` found out about this engine."""
        self.facts = learned.facts
        self.surveyed.update(learned.surveyed)
        self.notes.extend(learned.notes)


def host_specs(hosts: Sequence[Host]) -> tuple[Host, ...]:
    """The matrix's hosts; none means the engine found as the docker CLI finds it (engine/discovery.py)."""
    return tuple(hosts) or (LOCAL,)


async def connect_all(specs: Sequence[Host]) -> list[Engine]:
    """Connect to every host at once; one that cannot be reached keeps its reason."""

    async def one(spec: Host) -> Engine:
        try:
            host = await DockerHost.connect(spec.name, spec.docker, tls=spec.tls)
        except EcoreadyError as exc:
            return Engine(spec, error=one_line(str(exc), 300))
        return Engine(spec, host=host)

    return list(await asyncio.gather(*(one(spec) for spec in specs)))


def unreachable_facts(engine: Engine) -> HostFacts:
    """What the plan knows of a host it could not reach: what [[hosts]] says it serves."""
    spec = engine.spec
    return HostFacts(
        name=spec.name,
        native_arch="",
        serves=spec.arches,
        docker=spec.docker,
        error=f"unreachable: {engine.error}",
        **cost_facts(spec),
    )


def cost_facts(spec: Host) -> dict[str, Any]:
    """The cost model's facts of a host, as [[hosts]] (or the price file) gave them."""
    return {
        "price_per_hour": spec.price_per_hour,
        "price_per_month": spec.price_per_month,
        "price_per_year": spec.price_per_year,
        "cpu_ghz": spec.cpu_ghz,
        "vcpus": spec.vcpus,
        "memory_gib": spec.memory_gib,
        "instance": spec.instance,
        "price_source": spec.price_source,
        "price_date": spec.price_date,
    }


def emulation_wanted(spec: Host, native: str, wanted: Sequence[str]) -> list[str]:
    """The arches to emulate on a host: those `arches` lists besides the native one, or
    (no list) every wanted arch but the native one when `emulate` is on."""
    if spec.arches:
        return [a for a in spec.arches if a != native and a in wanted]
    return [a for a in wanted if a != native] if spec.emulate else []


@dataclass(frozen=True)
class ArchNeeds:
    """What the run needs of one arch before it is planned: the images of the matrix to
    survey a platform of it with (none: no cell needs the arch) and their probe kinds."""

    images: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class Learned:
    """What asking one engine taught the run: its facts (what it emulates and serves, its
    cost model), the platform fitness surveyed while its emulators were proven, and notes."""

    facts: HostFacts
    surveyed: Mapping[str, PlatformFitness]
    notes: tuple[str, ...]


async def learn_facts(
    engines: Sequence[Engine],
    runs: Mapping[str, RunContext],
    needs: Mapping[str, ArchNeeds],
    engine_emulators: Callable[[], Mapping[str, Emulator]],
    memory: EngineMemory,
) -> dict[str, Learned]:
    """What each reachable engine serves, by host name: the engine's own view, what it
    emulates of the arches in `needs`, and its cost model; the caller applies it
    (`Engine.learn`). What it emulates is asked of the engine (run/emulation.py);
    `engine_emulators` reads the binfmt table of this machine's kernel, a hint used only
    for an engine that runs on it. An engine that stops answering while it is asked keeps
    its error, and its host is closed."""
    wanted = tuple(needs)

    async def one(engine: Engine) -> tuple[str, Learned]:
        assert engine.host is not None and engine.facts is not None
        facts = engine.facts
        spec, native = engine.spec, facts.native_arch
        candidates = emulation_wanted(spec, native, wanted)
        others_native = {e.facts.native_arch for e in engines if e is not engine and e.facts and not e.error}
        # an arch another host runs natively need not be proven here, unless [[hosts]] lists it
        # nor one no cell of the run needs (no image of the matrix for it)
        candidates = [a for a in candidates if (a in spec.arches or a not in others_native) and needs[a].images]
        found = await find_emulation(
            runs[spec.name],
            candidates,
            hint=engine_emulators() if engine.host.same_kernel else {},
            memory=memory,
            images={a: needs[a].images for a in candidates},
            kinds={a: needs[a].kinds for a in candidates},
        )
        native_served = not spec.arches or native in spec.arches
        serves = ((native,) if native_served else ()) + tuple(found.emulators)
        learned = replace(
            facts,
            emulated_arches=tuple(found.emulators),
            emulators=found.emulators,
            serves=serves,
            docker=spec.docker,
            **cost_facts(spec),
        )
        return spec.name, Learned(learned, dict(found.surveyed), tuple(found.notes))

    # the engines' own views first: a host need not prove it emulates an arch that another
    # host runs natively
    await asyncio.gather(*(_engine_view(e) for e in engines if e.host is not None))
    return dict(await asyncio.gather(*(one(e) for e in engines if e.host is not None)))


async def _engine_view(engine: Engine) -> None:
    assert engine.host is not None
    try:
        engine.facts = engine.host.facts({})
    except EcoreadyError as exc:  # it answered the ping, then stopped answering
        engine.error = one_line(str(exc), 300)
        await engine.host.close()
        engine.host = None


async def close_all(engines: Iterable[Engine]) -> None:
    await asyncio.gather(*(e.host.close() for e in engines if e.host is not None), return_exceptions=True)
