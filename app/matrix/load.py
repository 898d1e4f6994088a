"""Load and validate matrix.toml.

Every problem is reported as `file:line:col: message` naming the key, all problems of a
file at once, never a traceback. Syntax errors come from tomllib; positions of schema
errors come from `tomlpos`, because tomllib forgets where keys were.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ecoready.domain.errors import ConfigError, Problem
from ecoready.domain.model import Profile
from ecoready.domain.reading import read_bounded, too_many_digits
from ecoready.matrix.checker import Checker
from ecoready.matrix.document import Matrix
from ecoready.matrix.hosts_section import hosts_section
from ecoready.matrix.mirrors import with_environment
from ecoready.matrix.registry_section import registry_section
from ecoready.matrix.sections import TOP_KEYS, components_section, sysbench_section
from ecoready.matrix.targets import targets_section
from ecoready.matrix.tomlpos import locate

MAX_MATRIX_BYTES = 1 << 20  # tomllib's docs advise bounding untrusted input
_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")


def read_text(path: Path) -> str:
    """The file as text, refusing what cannot be a matrix (not a regular file, too big,
    binary, not UTF-8)."""
    return decode(str(path), read_bounded(path, MAX_MATRIX_BYTES, "matrix file"))


def decode(file: str, data: bytes) -> str:
    nul = data.find(b"\x00")
    if nul != -1:
        line = data.count(b"\n", 0, nul) + 1
        col = nul - (data.rfind(b"\n", 0, nul) + 1) + 1
        raise ConfigError([Problem(file, line, col, "binary data (a NUL byte): not a TOML file")])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError([Problem(file, line, col, "not valid UTF-8")]) from None


SHIPPED = "default_matrix.toml"  # the default matrix inside the package: the repository's matrix.toml


def shipped_matrix() -> Path:
    """The default matrix shipped with ecoready (a file of the installed package)."""
    return Path(__file__).with_name(SHIPPED)


def load(path: str | Path, environ: Mapping[str, str] | None = None) -> Matrix:
    """The matrix file as this environment sees it (registry mirrors set for CI:
    `matrix/mirrors.py`)."""
    p = Path(path)
    matrix = replace(parse(read_text(p), str(p)), place=place_of(p))
    registry = with_environment(matrix.registry, os.environ if environ is None else environ)
    return matrix if registry == matrix.registry else replace(matrix, registry=registry)


def place_of(path: Path) -> str:
    """The identity of where a matrix file is, whichever path names it (relative, absolute,
    through a link): a digest of its resolved path, so a report shared keeps no home folder."""
    return _sha256(str(path.resolve()))


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def parse(text: str, file: str = "matrix.toml") -> Matrix:
    """Validate a matrix document; raise ConfigError listing every problem."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_MATRIX_BYTES:
        raise ConfigError([Problem(file, 1, 1, f"document is larger than {MAX_MATRIX_BYTES} bytes")])
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([_syntax_problem(file, text, exc)]) from None
    except RecursionError as exc:  # pathological nesting
        raise ConfigError([Problem(file, 1, 1, f"nested too deeply to read: {type(exc).__name__}")]) from None
    except ValueError as exc:  # a number longer than Python turns into an integer
        raise too_many_digits(file, text, exc) from None
    checker = Checker(file, locate(text))
    matrix = _validate(data, checker, file)
    if checker.problems or matrix is None:
        problems = sorted(set(checker.problems), key=lambda p: (p.line, p.col, p.message))
        raise ConfigError(problems or [Problem(file, 1, 1, "invalid matrix")])
    return replace(matrix, content=_sha256(text))


def _syntax_problem(file: str, text: str, exc: Exception) -> Problem:
    message = str(exc)
    line = getattr(exc, "lineno", None)
    col = getattr(exc, "colno", None)
    match = _TOML_POS.search(message)
    if match and not line:
        line, col = int(match.group(1)), int(match.group(2))
    message = _TOML_POS.sub("", message).strip()
    if not line:  # "at end of document"
        line = text.count("\n") + 1
        col = len(text) - (text.rfind("\n") + 1) + 1
        message = message.replace("(at end of document)", "").strip() + " (at end of file)"
    return Problem(file, int(line), int(col or 1), f"TOML syntax error: {message}")


def _validate(data: dict[str, Any], c: Checker, file: str) -> Matrix | None:
    c.strings(data)
    c.keys(data, (), TOP_KEYS)
    title = c.typed(data, (), "title", str) or Path(file).stem
    arches = c.arch_list(data, (), "arches")
    if arches is not None and not arches:
        c.add(("arches",), "'arches' must list at least one architecture")
    profile_name = c.typed(data, (), "profile", str)
    profile = Profile.QUICK
    if profile_name is not None:
        try:
            profile = Profile(profile_name)
        except ValueError:
            c.add(("profile",), f"'profile' must be one of smoke, quick, full, not {profile_name!r}")
    concurrency = c.typed(
        data, (), "concurrency", int, check=lambda v: None if 1 <= v <= 256 else "must be between 1 and 256"
    )
    registry = registry_section(data, c)
    sysbench = sysbench_section(data, c)
    hosts = hosts_section(data, c, Path(file).parent)
    components = components_section(data, c)
    targets = targets_section(data, c)
    if c.problems:
        return None
    return Matrix(
        path=file,
        title=title,
        arches=arches or ("amd64", "arm64"),
        profile=profile,
        components=tuple(components),
        hosts=tuple(hosts),
        concurrency=concurrency,
        registry=registry,
        sysbench=sysbench,
        targets=targets,
    )
