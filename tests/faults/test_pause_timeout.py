"""A `docker pause`d container ends its cell as `timeout` within its budget + 5 s, and the
other cells of the run finish.

When the pause lands while an exec is starting in that container, dockerd 20.10 wedges on
the container (inspect, unpause and rm -f all hang until its cgroup is thawed). ecoready
must then still finish, say which resource it could not remove, and exit; the test, as
the one who injected the fault, thaws the cgroup and `ecoready cleanup` removes the rest.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli import docker_labelled, ecoready
from tests.support.runs import Run, server_rows, write_matrix

pytestmark = pytest.mark.docker
BUDGET = 20


def thaw(container: str) -> None:
    """Undo `docker pause` under the engine's feet (cgroup v1 freezer or v2 cgroup.freeze)."""
    for pattern, value in (
        (f"/sys/fs/cgroup/freezer/docker/{container}*/freezer.state", "THAWED"),
        (f"/sys/fs/cgroup/system.slice/docker-{container}*.scope/cgroup.freeze", "0"),
    ):
        for path in Path("/").glob(pattern.lstrip("/")):
            path.write_text(value)


def test_paused_container_times_out_and_the_run_goes_on(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    matrix = write_matrix(
        tmp_path / "m.toml",
        # smoke profile: the healthy cell's bench would add a minute and test nothing here
        'concurrency = 2\nprofile = "smoke"\n'
        + server_rows("frozen", extra=f"timeout = {BUDGET}")
        + server_rows("healthy"),
    )
    run = Run(matrix, tmp_path, "--arch", "amd64")
    label = "label=ecoready.cell=frozen/amd64"
    deadline = time.monotonic() + 120
    container = ""
    while not container and time.monotonic() < deadline:
        out = subprocess.run(
            ["docker", "ps", "-q", "--no-trunc", "--filter", label, "--filter", f"label={run.owner}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        container = out[0] if out else ""
        time.sleep(0.05)
    assert container, "the frozen cell's container never appeared"
    subprocess.run(["docker", "pause", container], check=True, capture_output=True)
    code, report = run.finish(timeout=300)
    cells = {c["id"]: c for c in report["cells"]}
    frozen, healthy = cells["frozen/amd64"], cells["healthy/amd64"]
    assert frozen["status"] == "timeout", frozen
    start = next(s for s in frozen["stages"] if s["stage"] == "start")
    assert start["outcome"] == "timeout" and f"{BUDGET} s budget" in start["detail"]
    assert start["seconds"] <= BUDGET + 5
    assert frozen["seconds"] <= BUDGET + 5 + 10  # + the image stage and the log tail
    assert healthy["status"] == "ready"
    assert code == 1  # not ready, but no infrastructure error
    left = docker_labelled(run.owner)
    if left["containers"]:  # the engine wedged: the tool must have said so
        notes = [n["text"] for n in report["notes"]]
        assert any("could not be removed" in n or "could not remove" in n for n in notes), report
        thaw(container)
        assert ecoready("cleanup").returncode == 0
    assert docker_labelled(run.owner) == {"containers": [], "networks": [], "volumes": []}
