"""Hostile input at the command line, as a user meets it, each refused before anything runs:
exit 2 (3 for an arch no engine serves), one line on stderr saying what and where, never
a traceback, nothing on stdout.

- a matrix string with an escape, a control character, a newline or tab, a bidi or
  invisible character anywhere, or whitespace inside an id, an image reference, a host
  address or an option value: refused by every verb that loads a matrix, at file:line:col;
- report paths that could not be written (a missing folder, a read-only one, a directory,
  a symlink; check's history folder): refused before the run, or any registry, is asked;
- arguments that mean the same in every front end: `--only` naming no component, `--arch`
  not an arch, not checked by the matrix, or served by no engine, refused alike by the TUI
  (before its screen opens, on a real terminal) and headless.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import LAB_MATRIX, ROOT, ecoready

TEMPLATE = """title = "hostile"
arches = ["amd64", "arm64"]

[[hosts]]
name = "local"
docker = "{docker}"

[[components]]
id = "{id}"
category = "server"
probe = "server"
image = "{image}"

[components.options]
flavor = "{flavor}"
"""
GOOD = {"docker": "unix:///var/run/docker.sock", "id": "db", "image": "127.0.0.1:5000/lab/mariadb:10.11"}
GOOD["flavor"] = "mariadb"

# case -> (the key, its hostile value as TOML writes it, the problem said at its value)
CASES = {
    "escape in an image tag": (
        "image",
        "127.0.0.1:5000/lab/mariadb:10.11\\u001b[31m",
        "'components[0].image' contains an escape character (\\x1b)",
    ),
    "newline in an id": ("id", "db\\nrm -rf", "'components[0].id' contains a newline"),
    "whitespace in an image reference": (
        "image",
        "127.0.0.1:5000/lab/mariadb :10.11",
        "'components[0].image' must be an image reference like registry/name:tag",
    ),
    "bidi override in a host address": (
        "docker",
        "tcp://10.0.0.1:2375\\u202e",
        "'hosts[0].docker' contains an invisible or direction-changing character (\\u202e)",
    ),
    "whitespace in a host address": (
        "docker",
        "unix:///var/run/docker sock",
        "'hosts[0].docker' must be unix:///path, tcp://host:port or ssh://[user@]host[:port]",
    ),
    "tab in an option value": ("flavor", "maria\\tdb", "'components[0].options.flavor' contains a tab"),
    "space in an option value": ("flavor", "maria db", "'components[0].options.flavor' must not contain whitespace"),
    "zero-width space in an id": (
        "id",
        "db\\u200b",
        "'components[0].id' contains an invisible or direction-changing character (\\u200b)",
    ),
    "control character in an option value": (
        "flavor",
        "mariadb\\u0007",
        "'components[0].options.flavor' contains a control character (\\x07)",
    ),
}

VERBS = {
    "validate": lambda m, tmp: ["validate", m],
    "images": lambda m, tmp: ["images", "--matrix", m],
    "run --headless": lambda m, tmp: ["run", "--headless", "--matrix", m, "--json", "-"],
    "run (the TUI)": lambda m, tmp: ["run", "--matrix", m],
    "check": lambda m, tmp: ["check", "--matrix", m, "--history", str(tmp / "history")],
    "watch": lambda m, tmp: ["watch", "--every", "1h", "--matrix", m, "--history", str(tmp / "history")],
    "cleanup": lambda m, tmp: ["cleanup", "--matrix", m],
}


def one_line_and_nothing_else(result: subprocess.CompletedProcess[str], code: int) -> str:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == "", result
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("case", CASES)
def test_a_hostile_matrix_string_is_refused_by_every_verb(case: str, verb: str, tmp_path: Path) -> None:
    key, value, problem = CASES[case]
    text = TEMPLATE.format(**{**GOOD, key: value})
    matrix = tmp_path / "hostile.toml"
    matrix.write_text(text)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.startswith(f"{key} = "))
    col = text.splitlines()[line - 1].index('"') + 1
    events = tmp_path / "events.jsonl"
    result = ecoready(*VERBS[verb](str(matrix), tmp_path), timeout=60, env={"ECOREADY_EVENT_LOG": str(events)})
    assert one_line_and_nothing_else(result, 2) == f"{matrix}:{line}:{col}: {problem}"
    assert not events.exists() and not (tmp_path / "history").exists()  # nothing ran


# -- report paths ------------------------------------------------------------------------------
@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder no one can write in, root included (immutable: chattr +i)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    subprocess.run(["chattr", "+i", str(folder)], check=True, capture_output=True, timeout=10)
    try:
        yield folder
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True, capture_output=True, timeout=10)


@pytest.mark.parametrize("option", ["--json", "--md", "--html", "--junit"])
@pytest.mark.parametrize("where", ["read-only folder", "missing folder", "directory", "symlink"])
def test_an_unwritable_report_path_is_refused_before_the_run(
    option: str, where: str, read_only: Path, tmp_path: Path
) -> None:
    target = {
        "read-only folder": read_only / "report",
        "missing folder": tmp_path / "nowhere" / "report",
        "directory": tmp_path,
        "symlink": tmp_path / "link",
    }[where]
    if where == "symlink":
        target.symlink_to(tmp_path / "elsewhere")
    said = {
        "read-only folder": f"{target}: cannot write in {read_only}: Operation not permitted",
        "missing folder": f"{target}: directory {target.parent} does not exist",
        "directory": f"{target}: is a directory",
        "symlink": f"{target}: refusing to write through a symlink",
    }[where]
    events = tmp_path / "events.jsonl"
    args = ["run", "--headless", "--matrix", str(LAB_MATRIX), "--json", str(tmp_path / "ok.json"), option, str(target)]
    if option == "--json":
        args = [*args[:4], option, str(target)]
    result = ecoready(*args, timeout=60, env={"ECOREADY_EVENT_LOG": str(events)})
    assert one_line_and_nothing_else(result, 2) == f"ecoready: error: {said}"
    assert not events.exists() and not (tmp_path / "ok.json").exists()  # no run started


def test_every_verb_checks_its_report_paths_first(read_only: Path, tmp_path: Path) -> None:
    saved = ROOT / "tests" / "data" / "reports" / "lab-run.json"
    target = read_only / "out"
    said = f"ecoready: error: {target}: cannot write in {read_only}: Operation not permitted"
    for args in (
        ["check", "--matrix", str(LAB_MATRIX), "--history", str(tmp_path / "h"), "--md", str(target)],
        ["images", "--matrix", str(LAB_MATRIX), "--json", str(target)],  # before any registry is asked
        ["report", str(saved), "--html", str(target)],
        ["diff", str(saved), str(saved), "--json", str(target)],
    ):
        assert one_line_and_nothing_else(ecoready(*args, timeout=60), 2) == said, args
    history = ecoready("check", "--matrix", str(LAB_MATRIX), "--history", str(read_only), timeout=60)
    line = one_line_and_nothing_else(history, 2)
    assert line == f"ecoready: error: the history folder: cannot write in {read_only}: Operation not permitted"


# -- arguments, the same in every front end ----------------------------------------------------
def on_a_terminal(args: list[str], seconds: float = 60) -> tuple[int, str]:
    """`ecoready ARGS` on a real pseudo-terminal (the TUI's own front end): its exit code
    and everything it wrote there."""
    exe = str(Path(sys.executable).with_name("ecoready"))
    pid, fd = pty.fork()
    if pid == 0:  # the child: never back into pytest
        try:
            os.chdir(ROOT)
            os.execve(exe, [exe, *args], {**os.environ, "TERM": "xterm-256color"})
        finally:
            os._exit(127)
    out = b""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
        done, status = os.waitpid(pid, os.WNOHANG)
        while not done and time.monotonic() < deadline:  # the terminal closes a moment before the exit
            time.sleep(0.05)
            done, status = os.waitpid(pid, os.WNOHANG)
        if not done:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            raise AssertionError(f"still running after {seconds} s: {out[-500:]!r}")
    finally:
        os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


ALTERNATE_SCREEN = "\x1b[?1049h"  # what a full-screen app writes first


def test_the_tui_and_headless_refuse_alike() -> None:
    """Refused before the screen opens: what the matrix itself rules out. (An arch no
    engine serves is known only once the engines are asked: tests/integration/test_engines.py.)"""
    said = f"ecoready: error: --only names unknown component(s) of {LAB_MATRIX}: nosuch"
    args = ["--matrix", str(LAB_MATRIX), "--only", "nosuch"]
    headless = ecoready("run", "--headless", *args, "--json", "-", timeout=60)
    assert one_line_and_nothing_else(headless, 2) == said
    tui_code, screen = on_a_terminal(["run", *args])
    assert tui_code == 2, screen
    assert ALTERNATE_SCREEN not in screen and "Traceback" not in screen  # refused before the screen opened
    assert screen.strip().splitlines() == [said]


def test_an_arch_that_is_no_arch_is_a_usage_error_everywhere(tmp_path: Path) -> None:
    for args in (["run", "--headless"], ["run"], ["images"], ["check", "--history", str(tmp_path / "h")]):
        result = ecoready(*args, "--matrix", str(LAB_MATRIX), "--arch", "mips", timeout=60)
        assert result.returncode == 2 and "Traceback" not in result.stderr and result.stdout == ""
        assert result.stderr.splitlines()[-1].endswith(
            "error: argument --arch: unknown architecture 'mips' (amd64, arm64, ppc64le, s390x)"
        )


def test_an_arch_the_matrix_does_not_check_is_refused_not_an_empty_table() -> None:
    said = (
        f"ecoready: error: --arch ppc64le: no component is checked on ppc64le ({LAB_MATRIX} is checked on "
        "amd64, arm64); add it to the matrix's `arches`"
    )
    assert one_line_and_nothing_else(ecoready("images", "--matrix", str(LAB_MATRIX), "--arch", "ppc64le"), 2) == said
    only = ecoready("images", "--matrix", str(LAB_MATRIX), "--arch", "ppc64le", "--only", "mariadb-10.11")
    assert "(the components named by --only are checked on amd64, arm64)" in one_line_and_nothing_else(only, 2)
