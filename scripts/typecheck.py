#!/usr/bin/env python3
"""mypy over ecoready as it is installed, with every error at its path in this checkout.

setuptools maps the folders onto the package (`app/` -> `ecoready`, `probes/` ->
`ecoready.probes`, pyproject.toml's package-dir); mypy names a module after its folder
and has no such mapping. So this makes a tree of links named as the package
(build/typecheck/ecoready/<entry> -> app/<entry>, .../probes -> probes/), points mypy at it
together with tests/ and bench/, and prints mypy's report with the links' paths turned
back into the checkout's. Arguments are passed on to mypy.

mypy's cache is kept outside the checkout (MYPY_CACHE_DIR, by default
$XDG_CACHE_HOME/ecoready/mypy), so a fresh clone checks in about a second what a cold
cache takes ten for; mypy still rechecks every module whose content changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "typecheck"
PACKAGE = TREE / "ecoready"


def link_tree() -> None:
    """The package's tree as links, made anew (an entry added to app/ is in it next time)."""
    shutil.rmtree(TREE, ignore_errors=True)
    PACKAGE.mkdir(parents=True)
    for entry in (ROOT / "app").iterdir():
        if entry.name != "__pycache__":
            (PACKAGE / entry.name).symlink_to(entry)
    (PACKAGE / "probes").symlink_to(ROOT / "probes")


def main(argv: list[str]) -> int:
    link_tree()
    cmd = [sys.executable, "-m", "mypy", str(PACKAGE.relative_to(ROOT)), "tests", "bench", "scripts", *argv]
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    env = {"MYPY_CACHE_DIR": str(cache_home / "ecoready" / "mypy"), **os.environ, "MYPYPATH": str(TREE)}
    result = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    shown = Path(os.path.relpath(PACKAGE, ROOT)).as_posix()
    for stream, text in ((sys.stdout, result.stdout), (sys.stderr, result.stderr)):
        stream.write(text.replace(f"{shown}/probes/", "probes/").replace(f"{shown}/", "app/"))
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
