"""A docker compose file -> the stack's services (`services.py`).

Read with PyYAML's safe loader, bounded in size like a matrix, and walked only where the
compose specification puts scalars: a value of another shape is noted, never turned into
text; YAML aliases are bounded by the loader (`yaml_bounded.py`). What compose would take from
elsewhere (`${VAR}` from the shell or `.env`, `env_file`, volumes) is not read: each such
place is noted for `ecoready init` to print. `${VAR:-default}` becomes its default and `$$`
a literal `$`, as compose reads them. `include:` files are followed (`read_compose`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ecoready.domain.errors import ConfigError, Problem
from ecoready.domain.reading import MAX_DIGITS, number_position, read_text_bounded
from ecoready.stack.services import Service
from ecoready.stack.yaml_bounded import key_lines, load_one

MAX_COMPOSE_BYTES = 1 << 20
# compose's interpolation: `$$` is a literal `$`; `${VAR:-default}` and `${VAR-default}`
# take their default (no shell or .env is read); other variables are left for compose
_TOKEN = re.compile(r"\$\$|\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}$]*)\}|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")
Scalar = str | int | float | bool


MAX_INCLUDED = 32  # compose files read through `include:`, all levels together


def read_compose(path: Path) -> tuple[str, list[Service], list[str]]:
    """(project name, services, lines about files not read) of a compose file and the
    files its `include:` names (followed as compose follows them, relative to the file
    that names them); ConfigError (file:line:col) when one cannot be read or is not a
    compose file."""
    text = read_text_bounded(path, MAX_COMPOSE_BYTES, "compose file")
    data = _document(text, str(path))
    project = _project(data, str(path))
    services = _pinned(_services(data, str(path), project, required=not _includes(data)), text, str(path))
    notes: list[str] = []
    _follow(data, path, project, services, notes, {path.resolve()})
    if not services:
        raise ConfigError([Problem(str(path), 1, 1, "no service in it nor in the files it includes")])
    return project, services, notes


def parse_compose(text: str, file: str = "docker-compose.yml") -> tuple[str, list[Service]]:
    """(project name, services) of one compose document (its `include:` not followed)."""
    data = _document(text, file)
    project = _project(data, file)
    return project, _pinned(_services(data, file, project, required=True), text, file)


def _document(text: str, file: str) -> dict[str, Any]:
    data = load_one(text, file)
    long_number = number_position(text)  # in a string too (a port "8080:<5,000 digits>"): int() would raise
    if long_number is not None:
        line, col, digits = long_number
        raise ConfigError([Problem(file, line, col, f"a number of {digits} digits; at most {MAX_DIGITS} are read")])
    if not isinstance(data, dict):
        raise ConfigError([Problem(file, 1, 1, "no `services:` mapping: not a compose file")])
    return data


def _project(data: Mapping[str, Any], file: str) -> str:
    name = data.get("name")
    return name if isinstance(name, str) and name else Path(file).resolve().parent.name


def _services(data: Mapping[str, Any], file: str, project: str, *, required: bool) -> list[Service]:
    services = data.get("services")
    if services is None and not required:
        return []
    if not isinstance(services, dict) or not services:
        raise ConfigError([Problem(file, 1, 1, "no `services:` mapping: not a compose file")])
    return [_service(str(key), value, project) for key, value in services.items()]


def _pinned(services: list[Service], text: str, file: str) -> list[Service]:
    """Each service's arch pin with where it is written (`compose.yaml:7: services.db.platform`),
    so the plan and the tag watch can say which line to edit."""
    if not any(s.platform for s in services):
        return services
    lines = key_lines(text, file, "services", "platform")
    return [
        replace(s, pinned_at=(f"{Path(file).name}:{lines[s.name]}: services.{s.name}.platform",))
        if s.platform and s.name in lines
        else s
        for s in services
    ]


def _includes(data: Mapping[str, Any]) -> list[object]:
    value = data.get("include")
    return value if isinstance(value, list) else [] if value is None else [value]


def _follow(
    data: Mapping[str, Any], path: Path, project: str, services: list[Service], notes: list[str], seen: set[Path]
) -> None:
    """The services of the files `data`'s `include:` names, added to `services` (compose's
    rules: a path relative to the including file, the first of a `path:` list read and its
    overrides said, a service defined twice refused by compose and so said here)."""
    for item in _includes(data):
        raw = item.get("path") if isinstance(item, dict) else item
        given = raw if isinstance(raw, list) else [raw]
        paths = [p for p in given if isinstance(p, str) and p]
        if not paths or len(paths) != len(given):
            notes.append(f"{path}: an `include:` entry without a file path: not followed")
            continue
        first, unset = interpolate(paths[0])
        for other in paths[1:]:
            notes.append(f"{path}: include {other}: an override file: not read (the row is the base file's)")
        if unset:
            notes.append(f"{path}: include {paths[0]}: needs variables from the shell or .env: not followed")
            continue
        if "://" in first:
            notes.append(f"{path}: include {first}: a remote file: not followed (download it and include the copy)")
            continue
        target = (path.parent / first).resolve()
        if target in seen:
            notes.append(f"{path}: include {first}: included already: not read again")
            continue
        if len(seen) >= MAX_INCLUDED:
            notes.append(f"{path}: include {first}: more than {MAX_INCLUDED} included files: not followed")
            continue
        seen.add(target)
        text = read_text_bounded(target, MAX_COMPOSE_BYTES, "compose file")
        included = _document(text, str(target))
        names = {s.name for s in services}
        found = _services(included, str(target), project, required=not _includes(included))
        for service in _pinned(found, text, str(target)):
            if service.name in names:
                notes.append(f"{target}: service {service.name} is defined already: compose refuses this file")
            else:
                services.append(service)
        _follow(included, target, project, services, notes, seen)


def _service(name: str, raw: object, project: str) -> Service:
    notes: list[str] = []
    spec: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    if not isinstance(raw, dict):
        notes.append("its definition is not a mapping")
    image = _text(spec.get("image"), "image", notes)
    built = "build" in spec
    if built and not image:
        image = f"{project}-{name}"  # the name compose gives the image it builds
    for key in ("env_file", "volumes", "configs", "secrets", "extends"):
        if key in spec:
            notes.append(f"`{key}:` is not read: the check runs the image without it")
    return Service(
        name=name,
        image=image,
        platform=_text(spec.get("platform"), "platform", notes),
        depends_on=_names(spec.get("depends_on"), notes),
        environment=_environment(spec.get("environment"), notes),
        command=_argv(spec.get("command"), "command", notes),
        entrypoint=_argv(spec.get("entrypoint"), "entrypoint", notes),
        healthcheck=_healthcheck(spec.get("healthcheck"), notes),
        ports=_ports(spec.get("ports"), spec.get("expose"), notes),
        restart=_restart(spec, notes),
        built=built,
        notes=tuple(notes),
    )


def _restart(spec: Mapping[str, Any], notes: list[str]) -> str:
    """`restart:`, or the swarm form `deploy.restart_policy.condition` (any -> always)."""
    if "restart" in spec:
        return _text(spec.get("restart"), "restart", notes)
    deploy = spec.get("deploy")
    policy = deploy.get("restart_policy") if isinstance(deploy, dict) else None
    condition = policy.get("condition") if isinstance(policy, dict) else None
    if isinstance(condition, str):
        return "always" if condition == "any" else condition
    return ""


def _scalar(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _text(value: object, key: str, notes: list[str]) -> str:
    if value is None:
        return ""
    text = _scalar(value)
    if text is None:
        notes.append(f"`{key}:` is not a single value")
        return ""
    return _interpolated(text, key, notes)


def _interpolated(text: str, where: str, notes: list[str]) -> str:
    """`$$` -> `$`, `${VAR:-default}` -> default; other variables are compose's to fill:
    noted, kept."""
    value, unset = interpolate(text)
    if unset:
        notes.append(f"`{where}` uses variables from the shell or .env, which are not read")
    return value


def interpolate(text: str) -> tuple[str, bool]:
    """(text as compose reads it without a shell or .env, whether a variable was left)."""
    unset = False

    def one(match: re.Match[str]) -> str:
        nonlocal unset
        written = match.group(0)
        if written == "$$":
            return "$"
        if match.group(1) is not None:
            return match.group(1)
        unset = True
        return written

    return _TOKEN.sub(one, text), unset


def _names(value: object, notes: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    items = list(value) if isinstance(value, (list, dict)) else None
    if items is None or not all(isinstance(i, str) for i in items):
        notes.append("`depends_on:` is not a list of services")
        return ()
    return tuple(items)


def _environment(value: object, notes: list[str]) -> dict[str, str]:
    """`environment:` as a mapping or a list of `KEY=VALUE`; a key without a value (taken
    from the shell) is noted and left out."""
    pairs: list[tuple[str, object]] = []
    if isinstance(value, dict):
        pairs = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                key, sep, rest = item.partition("=")
                pairs.append((key, rest if sep else None))
        if not all(isinstance(item, str) for item in value):
            notes.append("`environment:` entries that are not KEY=VALUE are left out")
    elif value is not None:
        notes.append("`environment:` is neither a mapping nor a list")
    env: dict[str, str] = {}
    for key, raw in pairs:
        if raw is None:
            notes.append(f"`{key}` comes from the shell's environment, which is not read")
            continue
        text = _scalar(raw)
        if text is None:
            notes.append(f"`{key}` is not a single value")
            continue
        value, unset = interpolate(text)
        if unset:
            notes.append(f"`{key}` needs variables from the shell or .env: left out")
            continue
        env[key] = value
    return env


def _argv(value: object, key: str, notes: list[str]) -> tuple[str, ...]:
    """A command as compose takes it: a list, or a string split the way a shell would."""
    if value is None:
        return ()
    if isinstance(value, str):
        try:
            return tuple(shlex.split(_interpolated(value, key, notes)))
        except ValueError:
            notes.append(f"`{key}:` does not split into words")
            return ()
    if isinstance(value, list) and all(_scalar(v) is not None for v in value):
        return tuple(_interpolated(str(_scalar(v)), key, notes) for v in value)
    notes.append(f"`{key}:` is neither a string nor a list of words")
    return ()


def _healthcheck(value: object, notes: list[str]) -> tuple[str, ...]:
    """Docker's test form; `disable: true` and `test: ["NONE"]` mean none."""
    if not isinstance(value, dict) or value.get("disable") is True:
        return ()
    test = value.get("test")
    if isinstance(test, str):
        return ("CMD-SHELL", test)
    if isinstance(test, list) and test and all(isinstance(t, str) for t in test):
        if test[0] in ("CMD", "CMD-SHELL"):
            return tuple(test)
        return ()  # NONE
    if test is not None:
        notes.append("`healthcheck.test` is not understood")
    return ()


_PORT = re.compile(r"^(?:(?:[^:]*:)?[0-9-]*:)?([0-9]+)(?:-[0-9]+)?(?:/(tcp|udp))?\Z")


def _ports(ports: object, expose: object, notes: list[str]) -> tuple[int, ...]:
    """The container's own TCP ports: the target of each `ports:` entry, and `expose:`."""
    found: list[int] = []
    for value in (ports, expose):
        if value is None:
            continue
        if not isinstance(value, list):
            notes.append("`ports:`/`expose:` is not a list")
            continue
        for item in value:
            if isinstance(item, dict):
                target, protocol = item.get("target"), item.get("protocol", "tcp")
                if isinstance(target, int) and not isinstance(target, bool) and protocol == "tcp":
                    found.append(target)
                continue
            text = _scalar(item)
            match = _PORT.match(text or "")
            if match is None:
                notes.append(f"port {text or item!r} is not understood")
            elif match.group(2) != "udp":
                found.append(int(match.group(1)))
    return tuple(p for p in dict.fromkeys(found) if 0 < p < 65536)
