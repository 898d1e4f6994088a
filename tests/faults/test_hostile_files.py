"""Hostile files, as a user (or an attacker) hands them to ecoready: every path a verb reads
goes through one bounded reader (app/domain/reading.py) and every YAML through one bounded
loader (app/stack/yaml_bounded.py).

- a FIFO with no writer, and a device that never ends (/dev/zero), given to every verb
  that takes a path: refused at once, exit 2, one line naming the file and what it is;
- a YAML alias bomb in every list-valued compose field, and an alias inside its own
  anchor: refused at file:line:col naming the bound, in bounded time and memory;
- a 5,000-digit number in a compose file, a manifest, a matrix and a saved report:
  refused at file:line:col, exit 2, never a `ValueError` traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ecoready.domain.errors import ConfigError
from ecoready.domain.reading import MAX_DIGITS, read_bounded
from ecoready.stack.compose import parse_compose
from ecoready.stack.kube import parse_kubernetes
from ecoready.stack.yaml_build import MAX_VALUES
from tests.support.cli import ecoready

SAVED = Path(__file__).resolve().parents[1] / "data" / "reports" / "lab-mixed.json"
SECONDS = 20  # each verb: far more than a refusal takes, far less than a hang


def verbs(path: str, tmp_path: Path) -> dict[str, list[str]]:
    """Every verb that takes a path, given `path` where it takes one."""
    out = str(tmp_path / "out.toml")
    return {
        "init --from": ["init", "--from", path, "-o", out],
        "plan": ["plan", path],
        "report": ["report", path],
        "validate": ["validate", path],
        "diff (old)": ["diff", path, str(tmp_path / "absent.json")],
        "diff (new)": ["diff", str(SAVED), path],
        "check --report": ["check", "--report", path, "--history", str(tmp_path / "history")],
        "run --matrix": ["run", "--matrix", path, "--headless"],
        "images --matrix": ["images", "--matrix", path],
        "drivers --matrix": ["drivers", "--matrix", path],
        "cleanup --matrix": ["cleanup", "--matrix", path],
    }


def refused_at_once(args: list[str], path: str) -> str:
    start = time.monotonic()
    try:
        result = ecoready(*args, timeout=SECONDS, env={**os.environ, "DOCKER_HOST": "unix:///nonexistent"})
    except subprocess.TimeoutExpired:
        pytest.fail(f"ecoready {' '.join(args)} still running after {SECONDS} s")
    assert time.monotonic() - start < SECONDS
    assert result.returncode == 2, (args, result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and path in lines[0], lines[0]
    assert result.stdout == ""
    return lines[0]


@pytest.fixture
def fifo(tmp_path: Path) -> str:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return str(path)


@pytest.mark.parametrize("verb", list(verbs("P", Path("/t"))))
def test_a_fifo_is_refused_at_once_by_every_verb(verb: str, fifo: str, tmp_path: Path) -> None:
    line = refused_at_once(verbs(fifo, tmp_path)[verb], fifo)
    assert "a FIFO (named pipe), not a regular file" in line


@pytest.mark.parametrize("verb", list(verbs("P", Path("/t"))))
def test_a_device_is_refused_at_once_by_every_verb(verb: str, tmp_path: Path) -> None:
    line = refused_at_once(verbs("/dev/zero", tmp_path)[verb], "/dev/zero")
    assert "a character device, not a regular file" in line


def test_the_reader_refuses_what_is_no_regular_file_and_bounds_bytes(fifo: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="a FIFO"):
        read_bounded(fifo, 100)
    with pytest.raises(ConfigError, match="is a directory"):
        read_bounded(tmp_path, 100)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 101)
    with pytest.raises(ConfigError, match="larger than the bound: a file is at most 100 bytes"):
        read_bounded(big, 100)
    assert read_bounded(big, 101) == b"x" * 101


# -- YAML: aliases and numbers ----------------------------------------------------------------


def bomb(name: str = "h") -> str:
    """Anchors a..h, each nine of the one before: 9**8 (43 million) values from 300 bytes."""
    text = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    for n in "bcdefgh":
        prev = chr(ord(n) - 1)
        text += f"{n}: &{n} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
    return "x-bomb:\n" + textwrap.indent(text, "  ")


# every compose field `init` reads that holds a list, where the bomb is put
LIST_FIELDS = {
    "ports": "    ports: *h\n",
    "expose": "    expose: *h\n",
    "command": "    command: *h\n",
    "entrypoint": "    entrypoint: *h\n",
    "environment": "    environment: *h\n",
    "depends_on": "    depends_on: *h\n",
    "healthcheck.test": "    healthcheck: {test: *h}\n",
    "volumes": "    volumes: *h\n",
    "env_file": "    env_file: *h\n",
    "profiles": "    profiles: *h\n",
}


@pytest.mark.parametrize("field", list(LIST_FIELDS))
def test_an_alias_bomb_in_any_list_field_is_refused_in_bounded_time(field: str) -> None:
    text = bomb() + "services:\n  s:\n    image: x/s:1\n" + LIST_FIELDS[field]
    start = time.monotonic()
    with pytest.raises(ConfigError) as caught:
        parse_compose(text, "c.yml")
    assert time.monotonic() - start < 10  # expanded, the bomb takes hours
    assert str(caught.value).startswith("c.yml:")
    assert f"aliases here expand to more than {MAX_VALUES} values" in str(caught.value)


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    text = "services:\n  s: &s\n    image: x/s:1\n    ports: [*s]\n"
    with pytest.raises(ConfigError, match=r"^c\.yml:\d+:\d+: YAML: an alias inside its own anchor"):
        parse_compose(text, "c.yml")


def test_ordinary_anchors_and_merges_still_read() -> None:
    text = textwrap.dedent(
        """\
        x-common: &common
          environment: {A: "1"}
          ports: ["3306"]
        services:
          a: {<<: *common, image: x/a:1}
          b: {<<: *common, image: x/b:1}
        """
    )
    _, services = parse_compose(text, "c.yml")
    assert [(s.image, s.ports, s.environment) for s in services] == [
        ("x/a:1", (3306,), {"A": "1"}),
        ("x/b:1", (3306,), {"A": "1"}),
    ]


HUGE = "9" * 5000


def test_a_huge_number_in_a_compose_file_is_said_where_it_is() -> None:
    text = f"services:\n  s:\n    image: x/s:1\n    ports: [{HUGE}]\n"
    with pytest.raises(ConfigError, match=rf"^c\.yml:4:13: YAML: a number of 5000 digits; at most {MAX_DIGITS}"):
        parse_compose(text, "c.yml")


def test_a_huge_number_in_a_manifest_is_said_where_it_is() -> None:
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  priority: {HUGE}\n"
    with pytest.raises(ConfigError, match=r"^p\.yaml:5:13: YAML: a number of 5000 digits"):
        parse_kubernetes([("p.yaml", text)])


@pytest.mark.parametrize("verb", ["init", "validate", "report", "plan"])
def test_a_huge_number_in_any_file_is_exit_2_at_file_line_col(verb: str, tmp_path: Path) -> None:
    if verb == "init":
        path = tmp_path / "compose.yml"
        path.write_text(f"services:\n  s:\n    image: x/s:1\n    ports: [{HUGE}]\n")
        args = ["init", "--from", str(path), "-o", str(tmp_path / "m.toml")]
        where = f"{path}:4:13: "
    elif verb == "validate":
        path = tmp_path / "m.toml"
        path.write_text(f'title = "t"\nconcurrency = {HUGE}\n')
        args, where = ["validate", str(path)], f"{path}:2:15: "
    else:
        path = tmp_path / "r.json"
        path.write_text(
            json.dumps({"schema_version": 1, "tool": {"version": "1"}, "cells": []})[:-1] + f', "x": {HUGE}}}'
        )
        args = [verb, str(path)]
        where = f"{path}:1:"
    line = refused_at_once(args, str(path))
    assert where in line and "a number of 5000 digits" in line, line


def test_check_judges_a_saved_report_where_there_is_no_matrix(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("ecoready")
    result = subprocess.run(
        [str(exe), "check", "--report", str(SAVED), "--history", str(tmp_path / "history")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,  # no matrix.toml here: a saved report needs none
        env={**os.environ, "DOCKER_HOST": "unix:///nonexistent", "ECOREADY_WEBHOOK_URL": ""},
    )
    assert "matrix" not in result.stderr, result.stderr
    assert result.returncode in (0, 1, 3), result.stderr  # what the report holds decides
    assert list((tmp_path / "history").glob("*.json"))
