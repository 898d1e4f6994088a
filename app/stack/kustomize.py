"""A kustomization read by `init` itself when neither `kubectl` nor `kustomize` is on the
PATH: its `resources:` (files, and folders holding a kustomization: its bases, followed to
`MAX_DEPTH`, each once, never in a cycle) and its `images:` overrides (newName, newTag,
digest), applied base first, then each overlay's, as kustomize applies them. Files are
taken as kustomize's default load restrictor takes them: inside the kustomization's own
folder. Everything else a kustomization can do (patches, generators, name prefixes, labels,
replicas, components, remote bases) is not done here and is said, one line per
kustomization. An overlay and its base are one build: one server, not two.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecoready.domain.errors import ConfigError, Problem
from ecoready.domain.reading import read_bounded
from ecoready.stack.render import KUSTOMIZATIONS, kustomization_of
from ecoready.stack.yaml_bounded import load_one

MAX_DEPTH = 8  # an overlay of an overlay ... of a base
MAX_KUSTOMIZATIONS = 64
MAX_KUSTOMIZATION_BYTES = 1 << 20
READ = frozenset({"apiVersion", "kind", "resources", "bases", "images"})
SUFFIXES = (".yaml", ".yml", ".json")


@dataclass
class Build:
    """What the kustomizations hold: manifest files' bytes, `images:` overrides in the
    order kustomize applies them (base first), and what was not done."""

    texts: list[tuple[str, bytes]] = field(default_factory=list)
    images: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # (where, override)
    notes: list[str] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)


def build(kustomization: Path, limit: int) -> Build:
    """The build of `kustomization` (a kustomization file); ConfigError at file:line:col
    for what kustomize itself would refuse (a file outside the folder, a cycle, too deep)."""
    out = Build()
    _follow(kustomization, (), out, limit)
    return out


def _follow(file: Path, path: tuple[Path, ...], out: Build, limit: int) -> None:
    folder = file.parent.resolve()
    if folder in path:
        raise ConfigError([Problem(str(file), 1, 1, "a kustomization that is its own base (a cycle): not read")])
    if len(path) >= MAX_DEPTH or len(out.seen) >= MAX_KUSTOMIZATIONS:
        raise ConfigError(
            [Problem(str(file), 1, 1, f"bases deeper than {MAX_DEPTH}, or more than {MAX_KUSTOMIZATIONS}")]
        )
    if folder in out.seen:
        out.notes.append(f"{file}: a base already read through another kustomization: read once")
        return
    out.seen.add(folder)
    data = load_one(read_bounded(file, MAX_KUSTOMIZATION_BYTES, "kustomization"), str(file))
    spec: Mapping[str, Any] = data if isinstance(data, dict) else {}
    unread = sorted(str(k) for k in spec if k not in READ)
    if unread:
        out.notes.append(f"{file}: {', '.join(unread)}: not applied (kubectl or kustomize would apply them)")
    for entry in _list(spec.get("resources")) + _list(spec.get("bases")):
        _resource(entry, file, (*path, folder), out, limit)
    for override in _list(spec.get("images")):
        if isinstance(override, dict) and isinstance(override.get("name"), str):
            out.images.append((str(file), {str(k): str(v) for k, v in override.items() if isinstance(v, (str, int))}))
        else:
            out.notes.append(f"{file}: an `images:` entry without a name: not applied")


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _resource(entry: object, file: Path, path: tuple[Path, ...], out: Build, limit: int) -> None:
    if not isinstance(entry, str) or not entry:
        out.notes.append(f"{file}: a `resources:` entry that is not a path: not read")
        return
    if "://" in entry or entry.startswith(("github.com/", "git@")):
        out.notes.append(f"{file}: {entry}: a remote base: not read (build it with kubectl kustomize)")
        return
    target = (file.parent / entry).resolve()
    if target.is_dir():
        inner = kustomization_of(target)
        if inner is None:
            raise ConfigError(
                [Problem(str(file), 1, 1, f"{entry}: a folder without a kustomization ({KUSTOMIZATIONS[0]})")]
            )
        _follow(inner, path, out, limit)
        return
    if not target.is_relative_to(file.parent.resolve()):
        raise ConfigError(
            [Problem(str(file), 1, 1, f"{entry}: a file outside the kustomization's folder: kustomize refuses it")]
        )
    data = read_bounded(target, limit, "manifest file")
    total = sum(len(t) for _, t in out.texts) + len(data)
    if total > limit:
        raise ConfigError([Problem(str(target), 1, 1, f"the manifests are larger than {limit} bytes together")])
    out.texts.append((str(target), data))


def roots(folder: Path) -> list[Path]:
    """The kustomization files under `folder` that are no other one's base (its overlays),
    hidden folders and symlinked ones not followed; [] when no kustomization there is
    another's base (a folder of manifests is then read as it is)."""
    found: list[Path] = []
    for place, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(place, n) for n in names if n in KUSTOMIZATIONS)
        if len(found) > MAX_KUSTOMIZATIONS:
            raise ConfigError([Problem(str(folder), 1, 1, f"more than {MAX_KUSTOMIZATIONS} kustomizations")])
    bases: set[Path] = set()
    for file in found:
        data = load_one(read_bounded(file, MAX_KUSTOMIZATION_BYTES, "kustomization"), str(file))
        spec: Mapping[str, Any] = data if isinstance(data, dict) else {}
        for entry in _list(spec.get("resources")) + _list(spec.get("bases")):
            if isinstance(entry, str) and "://" not in entry:
                bases.add((file.parent / entry).resolve())
    top = sorted(f for f in found if f.parent.resolve() not in bases)
    return top if len(top) < len(found) else []


def apply_images(image: str, overrides: list[tuple[str, dict[str, str]]]) -> str:
    """`image` after kustomize's `images:` overrides, in order (the first that names it at
    each kustomization, as kustomize does)."""
    for _where, override in overrides:
        name, tag, digest = _split(image)
        if override.get("name") != name:
            continue
        name = override.get("newName") or name
        if override.get("digest"):
            image = f"{name}@{override['digest']}"
        elif override.get("newTag"):
            image = f"{name}:{override['newTag']}"
        else:
            image = name + (f":{tag}" if tag else "") + (f"@{digest}" if digest else "")
    return image


def _split(image: str) -> tuple[str, str, str]:
    """(name, tag, digest) of an image reference."""
    name, _, digest = image.partition("@")
    colon, slash = name.rfind(":"), name.rfind("/")
    if colon > slash:
        return name[:colon], name[colon + 1 :], digest
    return name, "", digest


__all__ = ["SUFFIXES", "Build", "apply_images", "build", "roots"]
