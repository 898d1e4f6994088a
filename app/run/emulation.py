"""Which foreign arches an engine runs, and with which emulator: asked of the engine.

For each arch a host should emulate, in this order:
1. on the engine's own kernel (engine/identity.py), the kernel's binfmt_misc table as a
   hint: a usable handler serves the arch at once (the platform survey that runs beside the
   cells confirms it), one with a known problem (disabled, no F flag, qemu < 8) does not;
2. what this engine answered before (`EngineMemory`: positive answers only, a week, keyed
   by the engine's ID): a cached "runs" serves the arch at once, and is forgotten when
   the survey beside the cells finds the arch cannot run after all;
3. otherwise a short-lived container of the arch is started through the engine (the
   survey, run/survey.py): the arch is served when that container runs as that arch.
   Docker Desktop's VM, Colima, OrbStack and remote hosts are all asked this way.

An engine that cannot run the arch gets a note with the remedy for that kind of engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ecoready.domain.blame import Cause
from ecoready.domain.errors import ConfigError
from ecoready.domain.model import PlatformFitness
from ecoready.domain.reading import read_bounded
from ecoready.engine.engine_kinds import EngineKind
from ecoready.engine.platform import Emulator
from ecoready.probe_api.run_context import RunContext
from ecoready.run.survey import ask

REMEMBER_SECONDS = 7 * 24 * 3600
MAX_MEMORY_BYTES = 1 << 20
ASKED_AS = "asked the engine with a container of the arch"


def default_memory_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ecoready" / "engines.json"


class EngineMemory:
    """What engines answered before: {engine id: {arch: {"emulator": str, "at": epoch}}}.
    Any disk problem only makes it forget."""

    def __init__(self, path: Path | None = None, now: float | None = None) -> None:
        self.path = path or default_memory_path()
        self.now = time.time() if now is None else now
        self.data: dict[str, dict[str, dict[str, object]]] = self._load()

    def _load(self) -> dict[str, dict[str, dict[str, object]]]:
        try:
            data = json.loads(read_bounded(self.path, MAX_MEMORY_BYTES, "emulation memory"))
        except (ConfigError, ValueError, RecursionError):  # gone, too large, not ours: forgotten
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, dict)}

    def known(self, engine_id: str, arch: str) -> str | None:
        entry = self.data.get(engine_id, {}).get(arch) if engine_id else None
        if not isinstance(entry, dict):
            return None
        at, emulator = entry.get("at"), entry.get("emulator")
        if not isinstance(at, (int, float)) or not isinstance(emulator, str) or self.now - at > REMEMBER_SECONDS:
            return None
        return emulator

    def remember(self, engine_id: str, arch: str, emulator: str) -> None:
        if engine_id:
            self.data.setdefault(engine_id, {})[arch] = {"emulator": emulator, "at": self.now}
            self._save()

    def forget(self, engine_id: str, arch: str) -> None:
        if self.data.get(engine_id, {}).pop(arch, None) is not None:
            self._save()

    def _save(self) -> None:
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".engines-")
            try:
                with os.fdopen(fd, "w") as handle:
                    json.dump(self.data, handle)
                os.replace(temporary, self.path)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)


@dataclass
class Emulation:
    """What one engine was found to emulate, and what to say about it."""

    emulators: dict[str, str] = field(default_factory=dict)  # arch -> emulator description
    surveyed: dict[str, PlatformFitness] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def remedy(kind: EngineKind, arch: str) -> str:
    return kind.emulate.format(arch=arch)


async def find_emulation(
    run: RunContext,
    candidates: Sequence[str],
    *,
    hint: Mapping[str, Emulator],
    memory: EngineMemory,
    images: Mapping[str, Sequence[str]],
    kinds: Mapping[str, Iterable[str]],
) -> Emulation:
    """The arches of `candidates` the engine of `run` can run (module docstring). `hint`:
    the binfmt table of the engine's kernel, empty when that kernel is not this one;
    no arch is served on a guess."""
    identity = run.host.identity
    host = run.host.name
    out = Emulation()
    to_ask: list[str] = []
    for arch in candidates:
        emulator = hint.get(arch)
        if emulator is not None:
            problem = emulator.problem()
            if problem is None:
                out.emulators[arch] = emulator.version or emulator.interpreter
            else:
                out.notes.append(f"host {host} cannot serve {arch}: {problem}; {remedy(identity.kind, arch)}")
            continue
        remembered = memory.known(identity.engine_id, arch)
        if remembered is not None:
            out.emulators[arch] = f"{remembered}, remembered from an earlier run"
        else:
            to_ask.append(arch)
    answers = await asyncio.gather(
        *(ask(run, arch, emulated=True, images=images[arch], kinds=kinds[arch]) for arch in to_ask)
    )
    for arch, answer in zip(to_ask, answers, strict=True):
        out.surveyed[arch] = answer.fitness
        if not answer.fitness.error:
            out.emulators[arch] = ASKED_AS
            memory.remember(identity.engine_id, arch, ASKED_AS)
        elif answer.cause is Cause.EMULATOR:
            out.notes.append(f"host {host} cannot run {arch} containers: {remedy(identity.kind, arch)}")
        else:
            out.notes.append(f"host {host} could not be asked whether it runs {arch}: {answer.fitness.error}")
    return out
