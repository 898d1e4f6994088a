"""Registry mirrors, the way enterprises pull: per upstream registry, host style (the same
repository paths on another host, as containerd's `hosts.toml`, Podman's
`registries.conf` and Docker's `registry-mirrors` do) or prefix style (a path in front of
them: Harbor proxy projects, Artifactory remote repositories, testcontainers' hub image
name prefix). Set in the matrix (`[registry.mirrors]`, and the old `[registry] mirror`
as the mirror of every registry) or by the environment for CI:

    ECOREADY_REGISTRY_MIRRORS="docker.io=mirror.local:5000/hub,ghcr.io=harbor.example/ghcr"
    ECOREADY_REGISTRY_FALLBACK=true      # a mirror that lacks an image: ask the upstream
    ECOREADY_REGISTRY_INSECURE="mirror.local:5000"   # plain-HTTP registries, added

The environment's entries replace the matrix's for the same upstream registry (the
settings keep which: `RegistrySettings.replaced`, said as a note). Every setting is checked
before anything runs, from either source, by the same grammar (`registry_names.py`); a
message says where and what is wrong and never repeats the value (it may hold a password).
Pure: the environment is passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ecoready.domain.errors import UsageError
from ecoready.matrix.document import EVERY_REGISTRY, Mirror, RegistrySettings
from ecoready.matrix.registry_names import DOCKER_HUB, host_problem, prefix_problem, upstream_name, value_problem

__all__ = ["DOCKER_HUB", "ENV_FALLBACK", "ENV_INSECURE", "ENV_MIRRORS", "mirror_for", "parse_mirror", "upstream_name"]

ENV_MIRRORS = "ECOREADY_REGISTRY_MIRRORS"
ENV_FALLBACK = "ECOREADY_REGISTRY_FALLBACK"
ENV_INSECURE = "ECOREADY_REGISTRY_INSECURE"
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


class MirrorProblem(ValueError):
    """What is wrong with a mirror setting; `in_key`: the registry named (before `=`, or the
    table's key), not the mirror. The message never holds the value."""

    def __init__(self, message: str, *, in_key: bool = False) -> None:
        super().__init__(message)
        self.in_key = in_key


def parse_mirror(upstream: str, value: str) -> Mirror:
    """`host[:port][/prefix]` for `upstream` (`*`, or a registry's `host[:port]`);
    MirrorProblem saying what is wrong, without the value."""
    key = upstream.strip(" ")  # spaces around '=' are a way of writing; any other character is checked
    if key != EVERY_REGISTRY:
        wrong = value_problem(key) or host_problem(key)
        if wrong:
            raise MirrorProblem(f"the registry {wrong} (docker.io, ghcr.io, host:port or *)", in_key=True)
    text = value.strip(" ").rstrip("/")
    wrong = value_problem(text)
    if wrong:
        raise MirrorProblem(f"the mirror {wrong}")
    host, _, prefix = text.partition("/")
    wrong = host_problem(host) or prefix_problem(prefix)
    if wrong:
        raise MirrorProblem(f"the mirror {wrong} (host[:port][/prefix])")
    return Mirror(upstream_name(key), host, prefix)


def mirror_for(settings: RegistrySettings, registry: str) -> Mirror | None:
    """The mirror that serves `registry`'s images: its own, else the one of every registry."""
    by_upstream = {m.upstream: m for m in settings.mirrors}
    return by_upstream.get(upstream_name(registry)) or by_upstream.get(EVERY_REGISTRY)


def environment_mirrors(raw: str) -> tuple[list[Mirror], list[str]]:
    """The entries of ECOREADY_REGISTRY_MIRRORS, and what is wrong with them (every one,
    `VARIABLE: entry N: what`), never repeating an entry (it may hold a password)."""
    mirrors: list[Mirror] = []
    problems: list[str] = []
    first: dict[str, int] = {}
    if not raw.strip(" "):
        return mirrors, problems
    for i, entry in enumerate(raw.split(","), start=1):
        where = f"{ENV_MIRRORS}: entry {i}"
        upstream, sep, value = entry.partition("=")
        if not entry.strip(" "):
            problems.append(f"{where} is empty (two commas in a row, or one at an end)")
            continue
        if not sep:
            problems.append(f"{where} is not REGISTRY=HOST[:PORT][/PREFIX] (no '=')")
            continue
        name = upstream_name(upstream.strip(" "))  # a duplicate is said even when an entry is wrong
        if name in first:
            problems.append(f"{where}: names the same registry as entry {first[name]}")
            continue
        first[name] = i
        try:
            mirrors.append(parse_mirror(upstream, value))
        except MirrorProblem as exc:
            problems.append(f"{where}: {exc}")
    return mirrors, problems


def environment_insecure(raw: str) -> tuple[list[str], list[str]]:
    """The hosts of ECOREADY_REGISTRY_INSECURE (`host[:port]`, commas between), and what is
    wrong with them."""
    hosts: list[str] = []
    problems: list[str] = []
    for i, entry in enumerate(raw.split(",") if raw.strip(" ") else (), start=1):
        host = entry.strip(" ")
        wrong = value_problem(host) or host_problem(host)
        if wrong:
            problems.append(f"{ENV_INSECURE}: entry {i}: the host {wrong} (host[:port])")
        elif host not in hosts:
            hosts.append(host)
    return hosts, problems


def with_environment(settings: RegistrySettings, environ: Mapping[str, str]) -> RegistrySettings:
    """The settings as this environment changes them; UsageError listing every problem of
    the variables (`VARIABLE: entry N: what`), exit 2 before anything runs."""
    from_env, problems = environment_mirrors(environ.get(ENV_MIRRORS, ""))
    extra, wrong_hosts = environment_insecure(environ.get(ENV_INSECURE, ""))
    problems += wrong_hosts
    fallback = settings.fallback
    raw = environ.get(ENV_FALLBACK)
    if raw is not None:
        word = raw.strip(" ").lower()
        if word not in _TRUE + _FALSE:
            problems.append(f"{ENV_FALLBACK}: is neither true nor false (1/0, yes/no, on/off)")
        fallback = word in _TRUE
    if problems:
        raise UsageError("\n".join(problems))
    mirrors = {m.upstream: m for m in settings.mirrors}
    replaced = tuple(mirrors[m.upstream] for m in from_env if m.upstream in mirrors and mirrors[m.upstream] != m)
    mirrors.update({m.upstream: m for m in from_env})
    insecure = list(settings.insecure) + [h for h in extra if h not in settings.insecure]
    return replace(
        settings,
        mirrors=tuple(mirrors.values()),
        fallback=fallback,
        insecure=tuple(insecure),
        replaced=settings.replaced + replaced,
    )


def override_notes(settings: RegistrySettings) -> list[str]:
    """One line per upstream registry whose mirror in the matrix the environment replaced."""
    now = {m.upstream: m for m in settings.mirrors}
    return [
        f"{ENV_MIRRORS} sets the mirror of {old.upstream} ({now[old.upstream].name}); the matrix's "
        f"({old.name}) is not used: the variable wins"
        for old in settings.replaced
        if old.upstream in now
    ]
