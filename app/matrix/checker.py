"""Checks of a parsed matrix document's values, each problem kept with the position of its
key or value (from `tomlpos`), so every one reads `file:line:col: message`."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ecoready.domain.errors import Problem
from ecoready.domain.model import normalize_arch
from ecoready.domain.text import acting_character, escaped
from ecoready.matrix.tomlpos import Positions


class Checker:
    """Collects problems with positions while walking the parsed document."""

    def __init__(self, file: str, positions: Positions) -> None:
        self.file = file
        self.pos = positions
        self.problems: list[Problem] = []
        self.flagged: set[tuple[str | int, ...]] = set()  # values `strings` refused: not checked again

    def strings(self, value: Any, path: tuple[str | int, ...] = ()) -> None:
        """Every key and string of the document, at any depth: none may hold a control
        character (tab and newline included), an escape or an invisible or
        direction-changing character. What is refused here is not checked again."""
        if isinstance(value, str):
            char = acting_character(value, layout_ok=False)
            if char is not None:
                self.flagged.add(path)
                self.add(path, f"'{dotted_path(path)}' contains {_describe(char)}")
        elif isinstance(value, dict):
            for key, item in value.items():
                char = acting_character(key, layout_ok=False)
                if char is not None:
                    self.flagged.add((*path, key))
                    self.add(
                        (*path, key),
                        f"a key of '{dotted_path(path) or 'the document'}' contains {_describe(char)}",
                        at_value=False,
                    )
                    continue
                self.strings(item, (*path, key))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                self.strings(item, (*path, i))

    def add(self, path: Sequence[str | int], message: str, *, at_value: bool = True) -> None:
        line, col = self.pos.of_value(path) if at_value else self.pos.of_key(path)
        self.problems.append(Problem(self.file, line, col, message))

    def keys(self, table: Mapping[str, Any], path: tuple[str | int, ...], allowed: Sequence[str]) -> None:
        for key in table:
            if key not in allowed and (*path, key) not in self.flagged:
                hint = difflib.get_close_matches(key, allowed, n=1)
                if hint:
                    more = f" (did you mean '{hint[0]}'?)"
                else:
                    more = f" (allowed: {', '.join(allowed)})" if allowed else " (this table takes no keys)"
                self.add((*path, key), f"unknown key '{dotted(path, key)}'{more}", at_value=False)

    def typed(
        self,
        table: Mapping[str, Any],
        path: tuple[str | int, ...],
        key: str,
        kind: type | tuple[type, ...],
        *,
        required: bool = False,
        check: Callable[[Any], str | None] | None = None,
    ) -> Any:
        """table[key] when present and of the right type (bool never passes for a number)."""
        where = (*path, key)
        if where in self.flagged:
            return None
        if key not in table:
            if required:
                self.add(path, f"missing required key '{dotted(path, key)}'", at_value=False)
            return None
        value = table[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if not ok:
            want = " or ".join(type_name(k) for k in kinds)
            self.add(where, f"'{dotted(path, key)}' must be {want}, not {type_name(type(value))}")
            return None
        if check is not None:
            message = check(value)
            if message:
                self.add(where, f"'{dotted(path, key)}' {message}")
                return None
        return value

    def arch_list(self, table: Mapping[str, Any], path: tuple[str | int, ...], key: str) -> tuple[str, ...] | None:
        raw = self.typed(table, path, key, list)
        if raw is None:
            return None
        arches: list[str] = []
        for i, item in enumerate(raw):
            name = normalize_arch(item) if isinstance(item, str) else None
            if name is None:
                self.add(
                    (*path, key, i),
                    f"'{dotted(path, key)}' has an unknown architecture {item!r} (known: amd64, arm64, ppc64le, s390x)",
                )
            elif name in arches:
                self.add((*path, key, i), f"'{dotted(path, key)}' lists {name} twice")
            else:
                arches.append(name)
        return tuple(arches)


def _describe(char: str) -> str:
    """What a refused character is, named by its code point (never the character itself)."""
    if char == "\n":
        return "a newline"
    if char == "\t":
        return "a tab"
    if char == "\x1b":
        return "an escape character (\\x1b)"
    if ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F:
        return f"a control character ({escaped(char)})"
    return f"an invisible or direction-changing character ({escaped(char)})"


def dotted_path(path: Sequence[str | int]) -> str:
    """("components", 2, "image") -> components[2].image"""
    return dotted(path[:-1], path[-1]) if path and isinstance(path[-1], str) else dotted(path, "").rstrip(".")


def dotted(path: Sequence[str | int], key: str) -> str:
    out = ""
    for seg in path:
        out += f"[{seg}]" if isinstance(seg, int) else (f".{seg}" if out else seg)
    return f"{out}.{key}" if out else key


def type_name(kind: type) -> str:
    return {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        list: "an array",
        dict: "a table",
    }.get(kind, kind.__name__)


def positive(value: float) -> str | None:
    return None if value > 0 else "must be greater than 0"


def non_negative(value: float) -> str | None:
    return None if value >= 0 else "must not be negative"


def non_empty(value: str) -> str | None:
    return None if value.strip() else "must not be empty"


def a_name(value: str) -> str | None:
    """Ids, host names and addresses, registry names: one word."""
    if not value.strip():
        return "must not be empty"
    return "must not contain whitespace" if any(ch.isspace() for ch in value) else None
