"""The generic `command` probe's options, checked beyond their types: lists of strings,
environment names and values, absolute file paths, the placeholders a value may use, and
that a row using the backend's details has a backend."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from typing import Any

# What `{name}` in an env value, a command or entrypoint argument, or a file's content
# becomes: the backend's connection details (probes/command.py fills them in; a unit test
# holds the two lists equal). The password itself has no placeholder: only its file's path.
COMMAND_PLACEHOLDERS = ("host", "port", "user", "database", "password_file")
COMMAND_MODES = ("run", "service")

_TOKEN = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_DATABASE = re.compile(r"^[A-Za-z0-9_]{1,64}\Z")

Problems = list[tuple[tuple[str | int, ...], str]]


def placeholders_in(text: str) -> list[str]:
    return _TOKEN.findall(text)


def check_command_options(options: Mapping[str, Any], has_backend: bool) -> Problems:
    """(path below `options`, message) for each problem the types alone do not show."""
    problems: Problems = []
    used: list[tuple[tuple[str | int, ...], str]] = []  # (where, placeholder)

    def strict(where: tuple[str | int, ...], text: str) -> None:
        for name in placeholders_in(text):
            if name not in COMMAND_PLACEHOLDERS:
                hint = difflib.get_close_matches(name, COMMAND_PLACEHOLDERS, n=1)
                more = f" (did you mean '{{{hint[0]}}}'?)" if hint else f" (known: {_known()})"
                problems.append((where, f"unknown placeholder '{{{name}}}'{more}"))
            else:
                used.append((where, name))

    for key in ("command", "entrypoint", "healthcheck"):
        items = options.get(key)
        if not isinstance(items, list):
            continue
        if not items:
            problems.append(((key,), f"'{key}' must list at least one string"))
        for i, item in enumerate(items):
            if not isinstance(item, str):
                problems.append(((key, i), f"'{key}' must list strings only"))
            elif key != "healthcheck":
                strict((key, i), item)
    health = options.get("healthcheck")
    if isinstance(health, list) and health and health[0] not in ("CMD", "CMD-SHELL"):
        problems.append((("healthcheck", 0), '\'healthcheck\' starts with "CMD" or "CMD-SHELL" (Docker\'s test form)'))
    problems.extend(_env_problems(options.get("env"), strict))
    problems.extend(_file_problems(options.get("files"), used))
    problems.extend(_scalar_problems(options))
    if not has_backend:
        for where, name in used[:1]:
            problems.append((where, f"'{{{name}}}' is the backend's: this row needs a 'backend'"))
    return problems


def _env_problems(env: object, strict: Callable[[tuple[str | int, ...], str], None]) -> Problems:
    """`env`: names as the shell takes them, string values (their placeholders checked)."""
    problems: Problems = []
    for name, value in env.items() if isinstance(env, dict) else ():
        if not _ENV_NAME.match(name):
            problems.append((("env", name), f"environment name {name!r} must be letters, digits and '_'"))
        if not isinstance(value, str):
            problems.append((("env", name), f"'env.{name}' must be a string"))
        else:
            strict(("env", name), value)
    return problems


def _file_problems(files: object, used: list[tuple[tuple[str | int, ...], str]]) -> Problems:
    """`files`: absolute paths without '..', string contents (their placeholders noted in `used`)."""
    problems: Problems = []
    for path, content in files.items() if isinstance(files, dict) else ():
        if not path.startswith("/") or "\x00" in path or ".." in path.split("/"):
            problems.append((("files", path), f"file path {path!r} must be absolute, without '..'"))
        if not isinstance(content, str):
            problems.append((("files", path), f"the content of {path!r} must be a string"))
        else:
            used.extend((("files", path), n) for n in placeholders_in(content) if n in COMMAND_PLACEHOLDERS)
    return problems


def _scalar_problems(options: Mapping[str, Any]) -> Problems:
    """`port`, `mode`, `database` and `limit`: their ranges, and what applies to which mode."""
    problems: Problems = []
    port = options.get("port")
    if isinstance(port, int) and not isinstance(port, bool) and not 1 <= port <= 65535:
        problems.append((("port",), "'port' must be between 1 and 65535"))
    if options.get("mode") == "run" and ("port" in options or "healthcheck" in options):
        key = "port" if "port" in options else "healthcheck"
        problems.append(((key,), f"'{key}' applies to mode = \"service\" (a command that stays up)"))
    database = options.get("database")
    if isinstance(database, str) and not _DATABASE.match(database):
        problems.append((("database",), "'database' must be 1-64 letters, digits or '_'"))
    limit = options.get("limit")
    if isinstance(limit, (int, float)) and not isinstance(limit, bool) and not 0 < limit <= 86_400:
        problems.append((("limit",), "'limit' must be between 0 and 86400 seconds"))
    return problems


def _known() -> str:
    return ", ".join(f"{{{n}}}" for n in COMMAND_PLACEHOLDERS)
