"""A matrix file, validated: what `ecoready.matrix.load` returns."""

from __future__ import annotations

from dataclasses import dataclass, field

from ecoready.domain.model import Component, Host, Profile
from ecoready.matrix.bench_settings import SysbenchConfig


@dataclass(frozen=True)
class RegistrySettings:
    mirror: str | None = None
    insecure: tuple[str, ...] = ()
    # seconds a run waits in all, per registry, when one asks it to (429 with Retry-After)
    rate_limit_wait: float = 10.0


@dataclass(frozen=True)
class Matrix:
    path: str
    title: str
    arches: tuple[str, ...]
    profile: Profile
    components: tuple[Component, ...]
    hosts: tuple[Host, ...] = ()
    concurrency: int | None = None
    registry: RegistrySettings = field(default_factory=RegistrySettings)
    sysbench: SysbenchConfig = field(default_factory=SysbenchConfig)

    def component(self, component_id: str) -> Component:
        for c in self.components:
            if c.id == component_id:
                return c
        raise KeyError(component_id)


def floating_tag(image: str) -> str | None:
    """`latest` or `no tag` when `image` floats (a run checks whatever it is that day, and
    two runs may not compare); None when a version tag or a digest pins it."""
    if "@" in image:
        return None  # pinned by digest
    name = image.rsplit("/", 1)[-1]
    tag = name.split(":", 1)[1] if ":" in name else ""
    return (tag or "no tag") if tag in ("", "latest") else None
