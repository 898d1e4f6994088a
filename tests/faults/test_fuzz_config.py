"""At least 10,000 generated matrix files (random text and near-valid TOML) through the
loader: no uncaught exception, and every error names a line (and a column)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecoready.domain.errors import ConfigError
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
