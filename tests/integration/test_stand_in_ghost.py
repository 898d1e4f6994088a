"""The default matrix's gh-ost row, unchanged, through a registry mirror pointed at the lab's
Docker Hub stand-in, on both arches: golang:1.27 (the stand-in's Debian build of Go 1.27),
gh-ost v1.1.8 resolved on the Go module proxy and built on the engine's native arch for each
cell's arch (for arm64, emulated here, cross-compiled with GOARCH=arm64 as gh-ost's release
binaries are: a build under qemu had not finished after 23 minutes), then run in the cell's
own-arch golang:1.27 (arm64 under qemu) for a real online migration against MySQL 9.7 (the
`mysql-9.7` row, the stand-in's Debian MySQL 9.7, on the cell's arch). Run twice: first in the
session's run of the default matrix through the stand-ins (tests/support/stand_in.py), then
alone, which finds both builds cached."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ecoready.lab.recipes import REGISTRY, STAND_IN
from ecoready.matrix.load import load
from tests.support.cli import ROOT, ecoready

pytestmark = [pytest.mark.docker, pytest.mark.slow]

MIRRORS = {"ECOREADY_REGISTRY_MIRRORS": f"docker.io={REGISTRY}/{STAND_IN}"}
MATRIX = ROOT / "matrix.toml"
ROW = next(c for c in load(MATRIX, {}).components if c.probe == "ghost")


def run_row(tmp_path: Path, name: str) -> tuple[dict[str, dict], subprocess.CompletedProcess[str]]:
    out = tmp_path / f"{name}.json"
    args = ("run", "--headless", "--matrix", str(MATRIX), "--only", ROW.id, "--json", str(out))
    result = ecoready(*args, env={**MIRRORS, "XDG_CACHE_HOME": str(tmp_path / "cache")}, timeout=1800)
    report = json.loads(out.read_text())
    cells = {c["arch"]: c for c in report["cells"] if c["component"] == ROW.id}
    assert set(cells) == {"amd64", "arm64"}, (cells, result.stderr[-3000:])
    return cells, result


def test_the_row_is_the_official_go_image_and_gh_ost_s_module_pinned_to_a_release() -> None:
    assert (ROW.image, ROW.backend) == ("golang:1.27", "mysql-9.7")
    assert ROW.options == {"install": "go:github.com/github/gh-ost@v1.1.8"}


def test_gh_ost_built_from_the_module_proxy_migrates_a_table_online_on_mysql_9_7(
    stand_in_report: dict[str, Any], tmp_path: Path, no_leaks: None
) -> None:
    # the first run: the session's run of the default matrix through the stand-ins (tests/conftest.py)
    cells = {c["arch"]: c for c in stand_in_report["cells"] if c["component"] == ROW.id}
    assert set(cells) == {"amd64", "arm64"}, stand_in_report["_stderr"][-3000:]
    for arch, cell in cells.items():
        assert cell["status"] == "ready", (arch, cell["detail"], cell["stages"], stand_in_report["_stderr"][-3000:])
        assert cell["emulated"] is (arch == "arm64"), cell
        assert cell["image"]["mirror"] == f"{REGISTRY}/{STAND_IN}", cell["image"]
        packaging = cell["packaging"]
        assert (packaging["registry"], packaging["package"], packaging["version"]) == (
            "go",
            "github.com/github/gh-ost",
            "v1.1.8",
        )
        assert packaging["verdict"] == "ready", packaging
        built = "built on amd64" if arch == "amd64" else "cross-compiled on amd64 for arm64"
        assert packaging["install"].startswith(f"{built} with go build (go1.27"), packaging
        took = "" if packaging["cached"] else ", in "  # an earlier run on this engine may have built it
        assert f", as gh-ost's release binaries are{took}" in packaging["install"], packaging
        assert packaging["install"].endswith(", from the Go module proxy: GitHub publishes no gh-ost image"), packaging
        (smoke,) = [s for s in cell["stages"] if s["stage"] == "smoke"]
        (check,) = smoke["checks"]
        assert (check["name"], check["outcome"]) == ("gh-ost", "pass"), check
        assert "3000 rows migrated online (ADD COLUMN added_online), every row's checksum unchanged" in check["detail"]
        assert "no _gho/_ghc/_ghk/_del table left" in check["detail"]

    again, result = run_row(tmp_path, "second")
    for arch, cell in again.items():
        assert cell["status"] == "ready" and cell["packaging"]["cached"] is True, (arch, cell["packaging"])
        assert ", in " not in cell["packaging"]["install"]  # no build time: nothing was built
    assert result.returncode == 0, result.stderr[-3000:]
