"""The engine's seam (app/probe_api/seams.py) against what stands on either side of it: the
real engine and the test fakes have every member of each protocol, and each method takes
the protocol's parameters (names, kinds, defaults), async where it is. mypy checks the
types where a RunContext is built; this also catches what it lets through (a default that
differs, a renamed parameter, a fake nobody built a context with yet)."""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

import pytest

from ecoready.engine.docker_host import DockerHost
from ecoready.engine.images import EngineImages
from ecoready.probe_api.seams import EngineHost, HostImages, RunImages
from ecoready.registry.image_store import ImageStore
from tests.support.fake_host import FakeHost, FakeHostImages, FakeImages

# each protocol: the real class first, then its fakes
SIDES: dict[type, tuple[type, ...]] = {
    EngineHost: (DockerHost, FakeHost),
    HostImages: (EngineImages, FakeHostImages),
    RunImages: (ImageStore, FakeImages),
}


def members(protocol: type) -> list[str]:
    return [name for name in vars(protocol) if not name.startswith("_")]


def assigned_on_self(cls: type) -> set[str]:
    """What the `__init__`s of `cls` and its bases assign to `self` (a dataclass's fields
    are its annotations instead: its generated `__init__` has no source)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if not inspect.isfunction(init):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
        except OSError:
            continue
        names |= {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
            if isinstance(node.value, ast.Name) and node.value.id == "self"
        }
    return names


def has_attribute(cls: type, name: str) -> bool:
    annotated = any(name in vars(klass).get("__annotations__", {}) for klass in cls.__mro__)
    return hasattr(cls, name) or annotated or name in assigned_on_self(cls)


def parameters(function: Any) -> list[tuple[str, inspect._ParameterKind, object]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize(
    ("protocol", "member", "side"),
    [(protocol, member, side) for protocol, sides in SIDES.items() for member in members(protocol) for side in sides],
    ids=lambda value: value if isinstance(value, str) else value.__name__,
)
def test_the_real_engine_and_each_fake_have_every_member_of_the_seam(protocol: type, member: str, side: type) -> None:
    wanted = inspect.getattr_static(protocol, member)
    if isinstance(wanted, property):
        found = inspect.getattr_static(side, member, None)
        assert not inspect.isfunction(found), f"{side.__name__}.{member} is a method; {protocol.__name__} reads it"
        assert has_attribute(side, member), f"{side.__name__} has no {member} ({protocol.__name__} reads it)"
        return
    found = inspect.getattr_static(side, member, None)
    assert inspect.isfunction(found), f"{side.__name__} has no method {member} ({protocol.__name__} calls it)"
    assert inspect.iscoroutinefunction(found) == inspect.iscoroutinefunction(wanted), member
    assert parameters(found) == parameters(wanted), f"{side.__name__}.{member} differs from {protocol.__name__}'s"
