"""At least 10,000 generated matrix files (random text and near-valid TOML) through the
loader: no uncaught exception, and every error names a line (and a column). Hostile
strings (escapes, control characters, newlines, bidi and invisible characters anywhere,
whitespace inside names) are refused at their value's line; a matrix that loads holds none."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecoready.domain.errors import ConfigError
from ecoready.domain.text import acting_character
from ecoready.matrix.load import parse

VALID = """\
title = "lab"
arches = ["amd64", "arm64"]
profile = "smoke"
concurrency = 2

[registry]
mirror = "127.0.0.1:5000"

[[hosts]]
name = "local"
price_per_hour = 0.1

[[components]]
id = "db"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:10.11"

[components.options]
args = ["--skip-log-bin"]

[[components]]
id = "proxy"
category = "load-balancer"
probe = "haproxy"
image = "127.0.0.1:5000/lab/haproxy:2.6"
backend = "db"
"""
LINES = VALID.splitlines(keepends=True)
PIECES = [
    '"',
    "'",
    "[",
    "]",
    "[[",
    "]]",
    "=",
    ",",
    "{",
    "}",
    "\n",
    "#",
    ".",
    "\\",
    '"""',
    "\x00",
    "\u00e9",
    "-",
    "true",
    "1e999",
    "-0",
    "0x1F",
    "1979-05-27T07:32:00Z",
    "inf",
    "nan",
    "backend",
    "probe",
    "id",
    " ",
]


def _mutate(data: st.DataObject) -> str:
    lines = list(LINES)
    for _ in range(data.draw(st.integers(1, 6))):
        op = data.draw(st.sampled_from(["drop", "dup", "insert", "replace", "swap"]))
        i = data.draw(st.integers(0, len(lines) - 1))
        if op == "drop" and len(lines) > 1:
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "insert":
            pos = data.draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:pos] + data.draw(st.sampled_from(PIECES)) + lines[i][pos:]
        elif op == "replace":
            lines[i] = data.draw(st.text(max_size=40)) + "\n"
        elif op == "swap":
            j = data.draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def _check(text: str) -> None:
    try:
        parse(text, "fuzz.toml")
    except ConfigError as exc:
        assert exc.problems, "a ConfigError must carry problems"
        for problem in exc.problems:
            assert problem.line >= 1 and problem.col >= 1, problem
            assert str(problem).startswith(f"fuzz.toml:{problem.line}:{problem.col}: ")


@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.text(max_size=400))
def test_random_text_never_escapes_as_an_exception(text: str) -> None:
    _check(text)


@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.data())
def test_near_valid_toml_never_escapes_as_an_exception(data: st.DataObject) -> None:
    _check(_mutate(data))


def test_the_fuzz_seed_is_valid() -> None:
    assert parse(VALID, "seed.toml").components[1].backend == "db"


# TOML escapes, so the file itself is valid TOML and only the values are hostile
ACTING = ["\\u001b", "\\u001b[31m", "\\n", "\\t", "\\r", "\\u0000", "\\u007f", "\\u009b", "\\u202e", "\\u2066"]
ACTING += ["\\u200b", "\\ufeff", "\\U000e0041", "\\u2028", "\\u00ad"]
SPACES = [" ", "\\u00a0", "\\u3000", "\\u2003"]
# key = "value" lines of the seed; the second group is the key
STRING_LINES = [(i, m) for i, line in enumerate(LINES) if (m := re.match(r'^(\s*([\w.-]+) = (?:\[)?")([^"]*)"', line))]
NAMES = {"id", "image", "backend", "mirror", "name", "probe", "category"}  # one word each


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in _strings(getattr(value, f.name))]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.data())
def test_a_hostile_string_anywhere_is_refused_at_its_line(data: st.DataObject) -> None:
    i, match = data.draw(st.sampled_from(STRING_LINES))
    is_name = match.group(2) in NAMES and not LINES[i].startswith("title")
    piece = data.draw(st.sampled_from(ACTING + SPACES if is_name else ACTING))
    value = match.group(3)
    pos = data.draw(st.integers(0 if piece not in SPACES else 1, len(value) - (0 if piece not in SPACES else 1)))
    lines = list(LINES)
    lines[i] = lines[i][: match.end(1)] + value[:pos] + piece + value[pos:] + lines[i][match.end(3) :]
    text = "".join(lines)
    try:
        parse(text, "hostile.toml")
    except ConfigError as exc:
        assert any(p.line == i + 1 for p in exc.problems), (text, exc.problems)
        for problem in exc.problems:
            assert acting_character(problem.message) is None  # the message shows no such character raw
        return
    raise AssertionError(f"accepted:\n{text}")


@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.data())
def test_a_matrix_that_loads_holds_no_acting_character(data: st.DataObject) -> None:
    text = _mutate(data)
    try:
        matrix = parse(text, "fuzz.toml")
    except ConfigError:
        return
    for value in _strings(matrix):
        assert acting_character(value, layout_ok=False) is None, repr(value)
