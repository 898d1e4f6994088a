"""What all cells of one run share (its engine, owner, secrets, images, event callback),
the labels of everything a run creates, and how a context gets the probe of a backend."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from ecoready.domain.errors import InfraError
from ecoready.domain.events import Event
from ecoready.domain.model import HostFacts
from ecoready.domain.specs import LABEL_CELL, LABEL_CREATED, LABEL_OWNER, LABEL_OWNER_START, LABEL_ROLE, LABEL_RUN
from ecoready.probe_api.activity import BenchGate, HostActivity
from ecoready.probe_api.handles import Endpoint
from ecoready.probe_api.secrets import Secrets

if TYPE_CHECKING:
    from ecoready.engine.owners import OwnerInfo
    from ecoready.packages.client import PackageClient
    from ecoready.probe_api.seams import EngineHost, RunImages


class BackendProbe(Protocol):
    """What the context needs of the probe that serves a cell's backend."""

    endpoint: Endpoint | None

    async def start(self) -> None: ...


# kind -> the class of that kind's probe, called with a ProbeContext. The run gives it (it may
# import ecoready.probes; this package may not); the context is Any here because naming
# ProbeContext would make this module and context.py import each other.
ProbeLoader = Callable[[str], Callable[[Any], BackendProbe]]


def _no_probes(kind: str) -> Callable[[Any], BackendProbe]:
    raise InfraError(f"no probe loader in this run: cannot start a {kind} backend")


@dataclass
class RunContext:
    """What all cells of one run share."""

    run_id: str
    host: EngineHost
    owner: OwnerInfo
    secrets: Secrets
    images: RunImages
    emit: Callable[[Event], None]
    emulation_factor: float = 1.0
    extra_labels: Mapping[str, str] = field(default_factory=dict)
    hosts: Mapping[str, HostFacts] = field(default_factory=dict)  # by name: what the plan learned
    # The SQL client's path in each image id, found once per run: finding it is an exec.
    client_paths: dict[str, str] = field(default_factory=dict)
    load_probe: ProbeLoader = _no_probes
    # Driver rows: the package registries (the packaging stage), and one install at a time
    # per cache key (two cells wanting the same install wait for the first).
    packages: PackageClient | None = None
    install_locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    # What runs on this host now (a bench's series record what shared the host), and the
    # gate that runs its bench stages one at a time with nothing else of the run beside them.
    activity: HostActivity = field(default_factory=HostActivity)
    gate: BenchGate = field(default_factory=BenchGate)
    # Parity (domain/parity.py): cells gather facts (packages, build IDs, a server's own) to compare
    parity: bool = True


def resource_labels(run: RunContext, cell_id: str, role: str) -> dict[str, str]:
    """The labels of everything a run creates (in the create call), for sweeps by run and owner."""
    return {
        **run.extra_labels,
        LABEL_RUN: run.run_id,
        LABEL_OWNER: f"{run.owner.hostname}:{run.owner.pid}",
        LABEL_OWNER_START: run.owner.start,
        LABEL_CELL: cell_id,
        LABEL_CREATED: datetime.now(UTC).isoformat(timespec="seconds"),
        LABEL_ROLE: role,
    }
