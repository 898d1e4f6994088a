"""What one cell created on its engine (containers, networks, volumes) and their removal.

A `ProbeContext` and the contexts of its backends share one `CellResources`; the runner's
`close()` in `finally` removes everything in it and says what the engine would not remove.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ecoready.domain.errors import EcoreadyError
from ecoready.domain.text import one_line
from ecoready.probe_api.handles import Container

if TYPE_CHECKING:
    from ecoready.probe_api.seams import EngineHost


@dataclass
class CellResources:
    containers: list[Container] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)

    async def remove_all(self, host: EngineHost) -> list[str]:
        """Remove every container (at once), then every network and volume, and forget
        them; one line for each the engine would not remove (the run's final sweep and
        `ecoready cleanup` retry those)."""
        failed: list[str] = []
        containers, self.containers = self.containers, []
        done = await asyncio.gather(*(host.remove_container(c.id) for c in containers), return_exceptions=True)
        for container, result in zip(containers, done, strict=True):
            if isinstance(result, BaseException):
                failed.append(f"container {container.name}: {one_line(str(result)) or type(result).__name__}")
        for network in self.networks:
            try:
                await host.remove_network(network)
            except EcoreadyError as exc:
                failed.append(f"network {network[:12]}: {one_line(str(exc))}")
        for volume in self.volumes:
            try:
                await host.remove_volume(volume)
            except EcoreadyError as exc:
                failed.append(f"volume {volume}: {one_line(str(exc))}")
        self.networks.clear()
        self.volumes.clear()
        return failed
