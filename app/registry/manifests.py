"""Image references and what registries' documents say, read without any I/O.

A reference is normalised the way docker does it (`mysql:8.4` is
`docker.io/library/mysql:8.4`, asked at `registry-1.docker.io`); a registry mirror
(`matrix/mirrors.py`) rewrites it. A manifest is an index (OCI image index, Docker manifest list) or an image
manifest (OCI, Docker schema 2; legacy schema 1 is read too); an index's platforms are its
real Linux arches, attestations and other operating systems left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ecoready.domain.model import normalize_arch
from ecoready.matrix.document import Mirror

INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
MANIFEST_TYPES = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
ACCEPT = ", ".join(INDEX_TYPES + MANIFEST_TYPES)
DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"


@dataclass(frozen=True)
class ImageRef:
    registry: str  # as written: docker.io, ghcr.io, 127.0.0.1:5000
    repository: str  # library/mysql
    tag: str | None = None
    digest: str | None = None

    @property
    def api_host(self) -> str:
        return DOCKER_HUB_API if self.registry == DOCKER_HUB else self.registry

    @property
    def reference(self) -> str:
        """The tag or digest to ask the manifests endpoint for."""
        return self.digest or self.tag or "latest"

    def with_tag(self, tag: str) -> ImageRef:
        return replace(self, tag=tag, digest=None)

    def at(self, digest: str) -> ImageRef:
        return replace(self, tag=None, digest=digest)

    def pull_name(self, digest: str) -> str:
        return f"{self.registry}/{self.repository}@{digest}"

    def __str__(self) -> str:
        base = f"{self.registry}/{self.repository}"
        if self.tag:
            base += f":{self.tag}"
        if self.digest:
            base += f"@{self.digest}"
        return base


def parse_reference(text: str) -> ImageRef:
    """Docker's normalisation: `mysql:8.4` -> docker.io/library/mysql:8.4."""
    name, _, digest = text.strip().partition("@")
    tag = None
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name, tag = name[:colon], name[colon + 1 :]
    first, _, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, repository = first, rest
    else:
        registry, repository = DOCKER_HUB, name
    if registry in ("index.docker.io", "registry-1.docker.io"):
        registry = DOCKER_HUB
    if registry == DOCKER_HUB and "/" not in repository:
        repository = f"library/{repository}"
    if not tag and not digest:
        tag = "latest"
    return ImageRef(registry, repository, tag, digest or None)


def on_mirror(ref: ImageRef, mirror: Mirror | None) -> ImageRef:
    """`ref` as asked of `mirror` (its host, its prefix before the repository path,
    docker.io's `library/` kept); `ref` itself when there is no mirror."""
    if mirror is None:
        return ref
    return replace(ref, registry=mirror.host, repository=mirror.repository(ref.repository))


@dataclass(frozen=True)
class Manifest:
    """A manifest or an index as the registry sent it (parsed)."""

    media_type: str
    digest: str
    body: Mapping[str, Any]

    @property
    def is_index(self) -> bool:
        if self.media_type in INDEX_TYPES:
            return True
        return self.media_type not in MANIFEST_TYPES and "manifests" in self.body and "config" not in self.body


def index_platforms(index: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(arch, entry) of an index's real Linux platforms; attestations (unknown/unknown)
    and 32-bit arm are skipped; arm64 means arm64/v8."""
    out: list[tuple[str, Mapping[str, Any]]] = []
    entries = index.get("manifests")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping):
            continue
        platform = entry.get("platform") or {}
        if not isinstance(platform, Mapping):
            continue
        os_name = str(platform.get("os", ""))
        raw = str(platform.get("architecture", ""))
        annotations = entry.get("annotations") or {}
        if os_name == "unknown" or raw == "unknown":
            continue
        if isinstance(annotations, Mapping) and annotations.get("vnd.docker.reference.type") == "attestation-manifest":
            continue
        if os_name and os_name != "linux":
            continue
        arch = arch_name(raw)
        if arch == "arm64" and platform.get("variant") not in (None, "", "v8"):
            continue
        if arch == "arm":
            continue
        out.append((arch, entry))
    return out


def pick_entry(platforms: list[tuple[str, Mapping[str, Any]]], arch: str) -> Mapping[str, Any] | None:
    """The entry for `arch`, the baseline variant first (amd64 before amd64/v3)."""
    candidates = [e for a, e in platforms if a == arch]
    baseline = [e for e in candidates if (e.get("platform") or {}).get("variant") in (None, "", "v1", "v8")]
    chosen = baseline or candidates
    return chosen[0] if chosen else None


def manifest_size(manifest: Mapping[str, Any]) -> int:
    layers = manifest.get("layers") or []
    config = manifest.get("config") or {}
    return int(sum(int(layer.get("size", 0)) for layer in layers) + int(config.get("size", 0)))


def arch_name(raw: str) -> str:
    """Docker's arch name, or the raw name made safe to show (it comes from the registry)."""
    return normalize_arch(raw) or re.sub(r"[^a-z0-9_.-]", "", raw.lower())[:24] or "unknown"
