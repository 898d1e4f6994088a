"""A registry that cannot be reached, with a real engine: the run says the trouble once
with its reason in words, once in the summary with the cells it cost and a way out that
fits (not the project's own test matrix); no exception class names anywhere."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker

EXE = Path(sys.executable).with_name("ecoready")
MATRIX = """
arches = ["amd64", "arm64"]
profile = "smoke"
[[components]]
id = "db"
category = "server"
probe = "server"
image = "nowhere.invalid/lib/mariadb:10.11"
[[components]]
id = "db2"
category = "server"
probe = "server"
image = "nowhere.invalid/lib/mysql:8.4"
"""


def test_an_unreachable_registry_is_said_once_in_words(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text(MATRIX)
    result = subprocess.run(
        [str(EXE), "run", "--headless", "--matrix", "m.toml", "--json", "r.json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 3, result.stderr  # the infrastructure failed: not the components
    said = result.stderr
    assert "Error" not in said and "Errno" not in said and "containers/lab.toml" not in said
    progress = [line for line in said.splitlines() if line.startswith("[ ")]
    assert len(progress) == 1  # the first cell says why; the other three are counted in the summary
    assert "cannot resolve the name" in progress[0] and "the summary counts them" in progress[0]
    assert "ecoready: note: registry" not in said  # the summary says it, once
    way_out = [line for line in said.splitlines() if "way out:" in line]
    assert len(way_out) == 1 and "6 cells" not in way_out[0] and "4 cells not checked" in way_out[0]
    assert "check that this machine reaches the registry" in way_out[0]
    assert "ᵉ" not in said  # no cell ran, so none is marked emulated
    report = json.loads((tmp_path / "r.json").read_text())
    assert all(c["status"] == "error" for c in report["cells"])  # the details stay in the JSON
    assert all("nowhere.invalid: unreachable (cannot resolve the name)" in c["detail"] for c in report["cells"])
