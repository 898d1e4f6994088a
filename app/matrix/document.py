"""A matrix file, validated: what `ecoready.matrix.load` returns."""

from __future__ import annotations

from dataclasses import dataclass, field

from ecoready.domain.cpus import Target
from ecoready.domain.model import Component, Host, Profile
from ecoready.matrix.bench_settings import SysbenchConfig

EVERY_REGISTRY = "*"  # the upstream key of a mirror of every registry without one of its own


@dataclass(frozen=True)
class Mirror:
    """Where images of `upstream` are asked (and pulled) instead: `host`, with `prefix`
    before their repository paths when it is a prefix-style mirror."""

    upstream: str  # docker.io, ghcr.io, ... or "*"
    host: str  # mirror.example:5000
    prefix: str = ""  # dockerhub-proxy (prefix style); "" for a host-style mirror

    @property
    def name(self) -> str:
        """`host[/prefix]`, as written in the matrix and said in reports."""
        return f"{self.host}/{self.prefix}" if self.prefix else self.host

    @property
    def style(self) -> str:
        return "prefix" if self.prefix else "host"

    def repository(self, repository: str) -> str:
        """The repository path on the mirror (docker.io's `library/` kept: Harbor and
        Artifactory proxies of Docker Hub name official images that way)."""
        return f"{self.prefix}/{repository}" if self.prefix else repository


@dataclass(frozen=True)
class RegistrySettings:
    # per upstream registry ("*": every other one); `[registry] mirror` is the "*" entry
    mirrors: tuple[Mirror, ...] = ()
    fallback: bool = False  # a mirror that lacks an image (or fails): ask the upstream registry
    insecure: tuple[str, ...] = ()
    # seconds a run waits in all, per registry, when one asks it to (429 with Retry-After)
    rate_limit_wait: float = 10.0
    # the matrix's mirrors that ECOREADY_REGISTRY_MIRRORS replaced (the variable wins; said as a note)
    replaced: tuple[Mirror, ...] = ()


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
    targets: tuple[Target, ...] = ()  # the target CPUs the build audit is answered for (matrix/targets.py)
    # which matrix this is, whatever path named it (`matrix_identity`): reports compare these
    content: str = ""  # sha256:<hex> of the document's text
    place: str = ""  # sha256:<hex> of the file's resolved path ("" when parsed from text alone)

    def component(self, component_id: str) -> Component:
        for c in self.components:
            if c.id == component_id:
                return c
        raise KeyError(component_id)

    def sysbench_image(self) -> tuple[str, str] | None:
        """(reference, name) of the sysbench image a run of this matrix's profile needs: the
        `[sysbench] image`, or the public base a derived one is made from; None without a bench."""
        if self.profile is Profile.SMOKE:
            return None
        if self.sysbench.image:
            return self.sysbench.image, "sysbench (tool image)"
        return self.sysbench.base, "sysbench base (derived on first use)"


def floating_tag(image: str) -> str | None:
    """`latest` or `no tag` when `image` floats (a run checks whatever it is that day, and
    two runs may not compare); None when a version tag or a digest pins it."""
    if "@" in image:
        return None  # pinned by digest
    name = image.rsplit("/", 1)[-1]
    tag = name.split(":", 1)[1] if ":" in name else ""
    return (tag or "no tag") if tag in ("", "latest") else None
