"""The matrix's `targets = [...]`: the machines a build audit is answered for, each a target
CPU id of app/domain/cpus.toml ("graviton2", "rpi4", "apple-m1") or an instance of the price
file ("aws:m6g.large", whose CPU the file names). An unknown name is refused at its
file:line:col with the nearest names of both files."""

from __future__ import annotations

from typing import Any

from ecoready.domain.cpus import Target, cpus, nearest
from ecoready.matrix.checker import Checker
from ecoready.matrix.prices import instances


def resolve(name: str) -> Target | None:
    """The target a name stands for: a target CPU id, else an instance of the price file."""
    if name in cpus():
        return Target(name, name)
    known = instances().get(name)
    if known is not None and known.target in cpus():
        return Target(name, known.target)
    return None


def targets_section(data: dict[str, Any], c: Checker) -> tuple[Target, ...]:
    raw = c.typed(data, (), "targets", list)
    if raw is None:
        return ()
    found: list[Target] = []
    for i, item in enumerate(raw):
        if not isinstance(item, str) or not item.strip():
            c.add(("targets", i), f"'targets' has {item!r}: each must be a target CPU id or an instance name")
            continue
        target = resolve(item)
        if target is None:
            near = nearest(item, [*cpus(), *instances()])
            more = f" (nearest: {', '.join(near)})" if near else f" (target CPUs: {', '.join(cpus())})"
            c.add(("targets", i), f"unknown target {item!r}: not a target CPU nor an instance of the price file{more}")
        elif any(t.name == item for t in found):
            c.add(("targets", i), f"'targets' names {item!r} twice")
        else:
            found.append(target)
    return tuple(found)
