"""Registry mirrors, the way enterprises pull: per upstream registry, host style (the same
repository paths on another host, as containerd's `hosts.toml`, Podman's
`registries.conf` and Docker's `registry-mirrors` do) or prefix style (a path in front of
them: Harbor proxy projects, Artifactory remote repositories, testcontainers' hub image
name prefix). Set in the matrix (`[registry.mirrors]`, and the old `[registry] mirror`
as the mirror of every registry) or by the environment for CI:

    ECOREADY_REGISTRY_MIRRORS="docker.io=mirror.local:5000/hub,ghcr.io=harbor.example/ghcr"
    ECOREADY_REGISTRY_FALLBACK=true      # a mirror that lacks an image: ask the upstream
    ECOREADY_REGISTRY_INSECURE="mirror.local:5000"   # plain-HTTP registries, added

The environment's entries replace the matrix's for the same upstream registry. Pure: the
environment is passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ecoready.domain.errors import UsageError
from ecoready.matrix.document import EVERY_REGISTRY, Mirror, RegistrySettings

DOCKER_HUB = "docker.io"
_HUB_ALIASES = ("index.docker.io", "registry-1.docker.io", "hub.docker.com")
ENV_MIRRORS = "ECOREADY_REGISTRY_MIRRORS"
ENV_FALLBACK = "ECOREADY_REGISTRY_FALLBACK"
ENV_INSECURE = "ECOREADY_REGISTRY_INSECURE"
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


def upstream_name(registry: str) -> str:
    """A registry as references normalise it (Docker Hub's other names are docker.io)."""
    name = registry.strip().lower().rstrip("/")
    return DOCKER_HUB if name in _HUB_ALIASES else name


def parse_mirror(upstream: str, value: str) -> Mirror:
    """`host[:port][/prefix]` for `upstream`; ValueError saying what is wrong."""
    text = value.strip().rstrip("/")
    if "://" in text:
        raise ValueError("must be host[:port][/prefix], without a scheme (plain-HTTP hosts go in `insecure`)")
    if not text or any(ch.isspace() for ch in text):
        raise ValueError("must be host[:port][/prefix] (one word)")
    host, _, prefix = text.partition("/")
    if not host or "@" in text or (any(part == "" for part in prefix.split("/")) and prefix):
        raise ValueError("must be host[:port][/prefix]")
    if prefix and prefix != prefix.lower():
        raise ValueError("a repository prefix is lower case (the distribution spec's grammar)")
    name = upstream_name(upstream)
    if not name or any(ch.isspace() for ch in name) or "/" in name:
        raise ValueError(f"{upstream!r} is not a registry name (docker.io, ghcr.io, host:port or *)")
    return Mirror(name, host, prefix)


def mirror_for(settings: RegistrySettings, registry: str) -> Mirror | None:
    """The mirror that serves `registry`'s images: its own, else the one of every registry."""
    by_upstream = {m.upstream: m for m in settings.mirrors}
    return by_upstream.get(upstream_name(registry)) or by_upstream.get(EVERY_REGISTRY)


def with_environment(settings: RegistrySettings, environ: Mapping[str, str]) -> RegistrySettings:
    """The settings as this environment changes them (UsageError naming the variable)."""
    mirrors = {m.upstream: m for m in settings.mirrors}
    for i, entry in enumerate(e for e in environ.get(ENV_MIRRORS, "").split(",") if e.strip()):
        upstream, sep, value = entry.partition("=")
        if not sep:
            raise UsageError(f"{ENV_MIRRORS}: entry {i + 1} {entry.strip()!r} is not REGISTRY=HOST[/PREFIX]")
        try:
            mirror = parse_mirror(upstream, value)
        except ValueError as exc:
            raise UsageError(f"{ENV_MIRRORS}: entry {i + 1} {entry.strip()!r}: {exc}") from None
        mirrors[mirror.upstream] = mirror
    fallback = settings.fallback
    raw = environ.get(ENV_FALLBACK)
    if raw is not None:
        word = raw.strip().lower()
        if word not in _TRUE + _FALSE:
            raise UsageError(f"{ENV_FALLBACK}: {raw!r} is not true or false")
        fallback = word in _TRUE
    insecure = list(settings.insecure)
    for host in environ.get(ENV_INSECURE, "").split(","):
        if host.strip() and host.strip() not in insecure:
            insecure.append(host.strip())
    return replace(settings, mirrors=tuple(mirrors.values()), fallback=fallback, insecure=tuple(insecure))
