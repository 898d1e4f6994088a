"""A pull that stops making progress ends as `error: pull stalled` (the idle watchdog),
not as a hang and never as the component's fault."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.support.cli import ecoready
from tests.support.registry_proxy import registry_proxy
from tests.support.runs import server_rows, write_matrix

pytestmark = pytest.mark.docker


@pytest.fixture
def unique_image(lab: Path, tmp_path: Path):
    """An image with one layer nobody has: pushed to the lab registry, then removed here,
    so the engine must really download that layer to run it."""
    name = f"127.0.0.1:5000/test/stall-{uuid.uuid4().hex[:10]}"
    (tmp_path / "Dockerfile").write_text(f"FROM ecoready-lab/tools:bookworm-amd64\nRUN echo {uuid.uuid4()} > /unique\n")
    subprocess.run(
        ["docker", "build", "-q", "--platform", "linux/amd64", "-t", f"{name}:1", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    subprocess.run(["docker", "push", f"{name}:1"], check=True, capture_output=True, timeout=300)
    subprocess.run(["docker", "rmi", f"{name}:1"], check=True, capture_output=True, timeout=60)
    yield name.split("/", 1)[1]
    subprocess.run(["docker", "rmi", "-f", f"{name}:1"], capture_output=True, timeout=60, check=False)


def test_a_stalled_pull_is_an_infrastructure_error(unique_image: str, tmp_path: Path, no_leaks: None) -> None:
    with registry_proxy() as proxy:
        proxy.stall_agent = "docker/"  # the engine's downloads stall; ecoready's own requests pass
        proxy.stall_blobs.set()
        matrix = write_matrix(tmp_path / "m.toml", server_rows("stalled", image=f"{proxy.address}/{unique_image}:1"))
        result = ecoready(
            "run",
            "--headless",
            "--matrix",
            str(matrix),
            "--arch",
            "amd64",
            "--json",
            "-",
            timeout=120,
            env={"ECOREADY_PULL_IDLE_TIMEOUT": "5"},
        )
        assert proxy.stalled >= 1, "the engine never asked for a blob: nothing was pulled"
    assert result.returncode == 3, result.stderr
    (cell,) = json.loads(result.stdout)["cells"]
    assert cell["status"] == "error"
    assert "pull stalled: no progress for 5 s" in cell["detail"], cell["detail"]
