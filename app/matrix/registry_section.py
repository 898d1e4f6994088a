"""The matrix's `[registry]` section: its mirrors (`[registry.mirrors]`, the old `mirror`),
`fallback`, `insecure` hosts and `rate_limit_wait`, each checked by the grammar of
`registry_names.py` with its position; a mirror's value is never repeated in a message
(it may hold a password)."""

from __future__ import annotations

from typing import Any

from ecoready.matrix.checker import Checker
from ecoready.matrix.document import EVERY_REGISTRY, Mirror, RegistrySettings
from ecoready.matrix.mirrors import MirrorProblem, parse_mirror
from ecoready.matrix.registry_names import host_problem, value_problem

REGISTRY_KEYS = ("mirror", "mirrors", "fallback", "insecure", "rate_limit_wait")
MAX_RATE_LIMIT_WAIT = 3600


def mirrors_table(raw: dict[str, Any], path: tuple[str, ...], c: Checker) -> dict[str, Mirror]:
    """`[registry] mirror` and `[registry.mirrors]`, each checked; a key is said only when it
    is a registry name (a value never: it may hold a password)."""
    mirrors: dict[str, Mirror] = {}
    legacy = c.typed(raw, path, "mirror", str)
    if legacy is not None:  # the mirror of every registry, as it always was
        try:
            mirrors[EVERY_REGISTRY] = parse_mirror(EVERY_REGISTRY, legacy)
        except MirrorProblem as exc:
            c.add((*path, "mirror"), f"'registry.mirror': {exc}")
    table = c.typed(raw, path, "mirrors", dict) or {}
    for upstream, value in table.items():
        where = (*path, "mirrors", upstream)
        if where in c.flagged:
            continue
        if not isinstance(value, str):
            c.add(where, "a value of 'registry.mirrors' must be a string host[:port][/prefix]")
            continue
        try:
            mirror = parse_mirror(upstream, value)
        except MirrorProblem as exc:
            named = "a key of 'registry.mirrors'" if exc.in_key else f"'registry.mirrors.\"{upstream}\"'"
            c.add(where, f"{named}: {exc}", at_value=not exc.in_key)
            continue
        if mirror.upstream in mirrors:
            same = "'registry.mirror'" if mirror.upstream == EVERY_REGISTRY and legacy is not None else "another key"
            c.add(where, f"'registry.mirrors.\"{upstream}\"' names the registry {mirror.upstream}, as {same} does")
            continue
        mirrors[mirror.upstream] = mirror
    return mirrors


def registry_section(data: dict[str, Any], c: Checker) -> RegistrySettings:
    raw = c.typed(data, (), "registry", dict)
    if raw is None:
        return RegistrySettings()
    path = ("registry",)
    c.keys(raw, path, REGISTRY_KEYS)
    mirrors = mirrors_table(raw, path, c)
    fallback = c.typed(raw, path, "fallback", bool)
    insecure = c.typed(raw, path, "insecure", list) or []
    for i, item in enumerate(insecure):
        if (*path, "insecure", i) in c.flagged:
            continue
        wrong = "is not a string" if not isinstance(item, str) else value_problem(item) or host_problem(item)
        if wrong:
            c.add((*path, "insecure", i), f"'registry.insecure' entry {i + 1} {wrong} (host[:port])")
    wait = c.typed(
        raw,
        path,
        "rate_limit_wait",
        (int, float),
        check=lambda v: None if 0 <= v <= MAX_RATE_LIMIT_WAIT else f"must be between 0 and {MAX_RATE_LIMIT_WAIT}",
    )
    return RegistrySettings(
        mirrors=tuple(mirrors.values()),
        fallback=bool(fallback),
        insecure=tuple(str(x) for x in insecure),
        rate_limit_wait=RegistrySettings.rate_limit_wait if wait is None else float(wait),
    )
