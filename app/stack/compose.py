"""A docker compose file -> the stack's services (`services.py`).

Read with PyYAML's safe loader, bounded in size like a matrix, and walked only where the
compose specification puts scalars: a value of another shape is noted, never turned into
text (YAML aliases can make a small file a huge tree). What compose would take from
elsewhere (`${VAR}` from the shell or `.env`, `env_file`, volumes) is not read: each such
place is noted for `ecoready init` to print. `${VAR:-default}` becomes its default.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ecoready.domain.errors import ConfigError, Problem
from ecoready.stack.services import Service

MAX_COMPOSE_BYTES = 1 << 20
_DEFAULTED = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}$]*)\}")
_UNSET = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")
Scalar = str | int | float | bool


def read_compose(path: Path) -> tuple[str, list[Service]]:
    """(project name, services) of a compose file; ConfigError (file:line:col) when it
    cannot be read or is not a compose file."""
    file = str(path)
    try:
        if path.stat().st_size > MAX_COMPOSE_BYTES:
            raise ConfigError([Problem(file, 1, 1, f"larger than {MAX_COMPOSE_BYTES} bytes: not a compose file")])
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ConfigError([Problem(file, 1, 1, "no such file")]) from None
    except UnicodeDecodeError:
        raise ConfigError([Problem(file, 1, 1, "not UTF-8 text")]) from None
    except OSError as exc:
        raise ConfigError([Problem(file, 1, 1, f"cannot read: {exc.strerror or exc}")]) from None
    return parse_compose(text, file)


def parse_compose(text: str, file: str = "docker-compose.yml") -> tuple[str, list[Service]]:
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        raise ConfigError([Problem(file, line, col, f"YAML: {exc.problem or exc}")]) from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise ConfigError([Problem(file, 1, 1, f"YAML: {type(exc).__name__}")]) from None
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict) or not services:
        raise ConfigError([Problem(file, 1, 1, "no `services:` mapping: not a compose file")])
    name = data.get("name")
    project = name if isinstance(name, str) and name else Path(file).resolve().parent.name
    return project, [_service(str(key), value, project) for key, value in services.items()]


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
    """`${VAR:-default}` -> default; other variables are compose's to fill: noted, kept."""
    text = _DEFAULTED.sub(lambda m: m.group(1), text)
    if _UNSET.search(text):
        notes.append(f"`{where}` uses variables from the shell or .env, which are not read")
    return text.replace("$$", "$")


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
        env[key] = _DEFAULTED.sub(lambda m: m.group(1), text).replace("$$", "$")  # the rest: mapping.py says
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
