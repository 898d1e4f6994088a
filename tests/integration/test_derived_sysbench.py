"""The bench stage's sysbench made from a public base on first use, for real: a matrix
that names no `[sysbench] image` gets Debian's sysbench installed into its `base` (here the
lab's Debian 12 slim image, standing in for `debian:*-slim`: apt from the Debian mirror),
per arch, committed as a local image labelled `ecoready.cache=tool`; the second run finds
that image instead of installing again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ecoready.probe_api.install_cache import LABEL_CACHE, LABEL_CACHE_OF
from tests.support.cli import ecoready
from tests.support.matrices import LAB_SERVER

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BASE = "127.0.0.1:5000/hub/library/debian:bookworm-slim"  # the lab's Debian 12 (bookworm) base, apt-get and all
SHORT = (
    f'[sysbench]\nbase = "{BASE}"\nworkloads = ["oltp_point_select"]\nthreads = [1]\n'
    "time = 1\nwarmup = 0\ntables = 1\ntable_size = 100\n"
)


FILTER = ("docker", "images", "-q", "--no-trunc", "--filter", f"label={LABEL_CACHE}=tool")


def tool_images() -> dict[str, str]:
    """id -> the arch of each cached sysbench image derived from BASE on the engine: only
    this test's (a run beside it, the stand-ins' default matrix, derives its own from
    another base, and gh-ost's builds are tool images too: never counted or removed here)."""
    ids = subprocess.run(
        [*FILTER, "--filter", f"label={LABEL_CACHE_OF}=sysbench on {BASE}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.split()
    out = {}
    for image in dict.fromkeys(ids):
        arch = subprocess.run(
            ["docker", "image", "inspect", "-f", "{{.Architecture}}", image],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()
        out[image] = arch
    return out


def forget_tool_images() -> None:
    for image in tool_images():
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True, timeout=60)


def bench_of(out: Path, args: tuple[str, ...], matrix: Path) -> dict[str, dict]:
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--json", str(out), *args, timeout=1500)
    report = json.loads(out.read_text())
    cells = {c["arch"]: c for c in report["cells"]}
    for cell in cells.values():
        assert cell["status"] == "ready", (cell, result.stderr[-3000:])
        assert cell["bench"]["tool"].startswith("sysbench 1.0"), cell["bench"]
    return cells


def test_sysbench_is_derived_on_first_use_and_found_on_the_second(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    forget_tool_images()
    matrix = tmp_path / "m.toml"
    matrix.write_text('arches = ["amd64", "arm64"]\n' + SHORT + LAB_SERVER)
    args = ("--profile", "quick")
    try:
        first = bench_of(tmp_path / "first.json", args, matrix)
        made = tool_images()
        assert sorted(made.values()) == ["amd64", "arm64"]  # one per arch, kept for later runs
        second = bench_of(tmp_path / "second.json", args, matrix)
        assert tool_images() == made  # found, not made again
        for cells in (first, second):
            assert {a: c["emulated"] for a, c in cells.items()} == {"amd64": False, "arm64": True}
    finally:
        forget_tool_images()
