"""Environment errors: an unreachable engine is one line and exit 3, quickly; an arch with
no emulator and no host ends its cells as `error` with the fix, while the others run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import ecoready
from tests.support.runs import server_rows, write_matrix

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("docker_host", ["unix:///nonexistent/docker.sock", "tcp://10.255.255.1:2375"])
def test_an_unreachable_engine_is_one_line_and_exit_3(lab: Path, docker_host: str) -> None:
    # the subprocess deadline is the "within 10 s" requirement (8 s connect deadline + start-up)
    result = ecoready(
        "run", "--headless", "--matrix", str(lab), "--json", "-", timeout=15, env={"DOCKER_HOST": docker_host}
    )
    assert result.returncode == 3
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    said = f"ecoready: error: the engine at {docker_host} (DOCKER_HOST) is unreachable: "  # where, and why there
    assert len(lines) == 1 and lines[0].startswith(said), result.stderr
    assert "make" not in lines[0].split()  # the way out is the engine's own, not this repository's
    assert "Traceback" not in result.stderr


def test_an_arch_without_emulator_or_host_errors_with_the_fix(lab: Path, tmp_path: Path) -> None:
    # smoke profile: the bench stage is not what this is about (test_lab_bench), and a quick
    # bench would add a minute to the amd64 cell
    matrix = write_matrix(tmp_path / "m.toml", 'arches = ["amd64", "s390x"]\nprofile = "smoke"\n' + server_rows("db"))
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--json", "-")
    assert result.returncode == 3, result.stderr
    cells = {c["id"]: c for c in json.loads(result.stdout)["cells"]}
    assert cells["db/amd64"]["status"] == "ready"
    s390x = cells["db/s390x"]
    assert s390x["status"] == "error"
    assert "no host for s390x" in s390x["detail"]
    (image,) = s390x["stages"]
    assert image["blame"]["cause"] == "no-host" and "[[hosts]]" in image["blame"]["fix"]
