"""A busy engine: its answer to a commit (a driver install's, `probe_api/install_cache.py`)
comes late, as on a loaded 2-core machine writing a large container's layer. The commit
is one of the long engine calls (commit, build, push, archive reads) that only their own
deadline may end: not the control client's 30 s socket timeout. When the deadline does
run out, the error names the step, the image and the engine, and the commit was tried
twice (committing again is harmless)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ecoready.domain.errors import DeadlineExceeded
from ecoready.engine.docker_host import DockerHost
from ecoready.engine.sdk import CONTROL_TIMEOUT
from tests.support.cli import TEST_LABEL_KEY, TEST_SESSION
from tests.support.engine_proxy import slow_engine

pytestmark = pytest.mark.docker
IMAGE = "ecoready-lab/app-client:1-amd64"  # any local image: the container is never started


def docker(*args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=120, check=True).stdout.strip()


@pytest.fixture
def container() -> Iterator[str]:
    if subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True, timeout=30).returncode != 0:
        pytest.fail(f"{IMAGE} is not on the engine: run `make lab`")
    made = docker("create", "--label", f"{TEST_LABEL_KEY}={TEST_SESSION}", "--network", "none", IMAGE, "true")
    yield made
    subprocess.run(["docker", "rm", "-f", made], capture_output=True, timeout=120)


def remove_image(reference: str) -> None:
    subprocess.run(["docker", "rmi", "-f", reference], capture_output=True, timeout=120)


def test_a_commit_slower_than_the_control_timeout_finishes(container: str, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:12]
    hold = CONTROL_TIMEOUT + 5

    async def commit() -> str:
        with slow_engine(tmp_path, hold=hold) as engine:
            host = await DockerHost.connect(url=engine.url)
            try:
                return await host.images.commit(container, "ecoready-test/slow-commit", tag, {"x": "1"})
            finally:
                await host.close()

    start = time.monotonic()
    try:
        image_id = asyncio.run(commit())
        assert time.monotonic() - start >= hold
        assert docker("image", "inspect", "--format", "{{.Id}}", f"ecoready-test/slow-commit:{tag}") == image_id
    finally:
        remove_image(f"ecoready-test/slow-commit:{tag}")


def test_a_commit_past_its_deadline_says_the_step_the_image_and_the_engine(container: str, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:12]

    async def commit() -> None:
        with slow_engine(tmp_path, hold=6) as engine:
            host = await DockerHost.connect(url=engine.url)
            try:
                with pytest.raises(DeadlineExceeded) as caught:
                    await host.images.commit(container, "ecoready-test/slow-commit", tag, {"x": "1"}, timeout=2)
                said = caught.value.detail
                assert said == (
                    f"the commit of ecoready-test/slow-commit:{tag} did not finish within 2 s "
                    f"on the engine at {engine.url} (tried twice)"
                ), said
                assert engine.held >= 2  # the second try was made
                await asyncio.sleep(7)  # the engine finishes what it was asked (then the image is removed)
            finally:
                await host.close()

    try:
        asyncio.run(commit())
    finally:
        remove_image(f"ecoready-test/slow-commit:{tag}")


def test_a_lab_build_stopped_by_a_busy_engine_says_a_re_run_resumes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What `ecoready lab build` prints when a step's deadline ran out (the step's own words
    come from the engine layer, as the tests above show)."""
    from ecoready.engine import docker_host
    from ecoready.lab import build as lab_build
    from ecoready.ui import cli

    class Host:
        async def sweep(self, **kwargs: object) -> list[str]:
            return []

        async def close(self) -> None:
            pass

    async def connect(*args: object, **kwargs: object) -> Host:
        return Host()

    async def slow(self: object, **kwargs: object) -> None:
        raise DeadlineExceeded(
            "the commit of ecoready-lab/mariadb:10.11-amd64 did not finish within 600 s "
            "on the engine at unix:///var/run/docker.sock (tried twice)"
        )

    monkeypatch.setattr(docker_host.DockerHost, "connect", connect)
    monkeypatch.setattr(lab_build.Lab, "build", slow)
    code = cli.main(["lab", "build", "--arch", "amd64"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1, err
    assert err[0] == (
        "ecoready: error: lab build: the commit of ecoready-lab/mariadb:10.11-amd64 did not finish "
        "within 600 s on the engine at unix:///var/run/docker.sock (tried twice); run `ecoready lab build` again: "
        "it keeps the images built already and resumes from this step"
    )


def test_a_lab_build_step_on_a_busy_engine_finishes(tmp_path: Path) -> None:
    """The lab's copy of a builder's output (`copy_from_image`): the engine takes longer
    than the control client's socket timeout to create the container it reads from."""
    hold = CONTROL_TIMEOUT + 5

    async def copy() -> bytes:
        with slow_engine(tmp_path, hold=hold, what="containers/create") as engine:
            host = await DockerHost.connect(url=engine.url)
            try:
                labels = {TEST_LABEL_KEY: TEST_SESSION, "ecoready.role": "lab-copy-out"}
                return await host.images.copy_from_image(IMAGE, "/etc/debian_version", labels=labels, timeout=120)
            finally:
                await host.close()

    start = time.monotonic()
    archive = asyncio.run(copy())
    assert time.monotonic() - start >= hold
    assert b"debian_version" in archive[:512]


CELL_MATRIX = (
    'profile = "smoke"\narches = ["amd64"]\n[[components]]\nid = "db"\ncategory = "server"\nprobe = "server"\n'
    'image = "127.0.0.1:5000/lab/mariadb:10.11"\n'
)


def test_a_cell_on_a_busy_engine_finishes_or_says_which_step_ran_out(lab: Path, tmp_path: Path) -> None:
    """Every container the run creates is answered late: under the call's timeout the cell
    is still ready; past it the cell ends `error` (cause `engine-stuck`: the tool's
    infrastructure, never the component nor its budget) naming the engine, and nothing of
    the run is left."""
    from tests.support.cli import docker_labelled, ecoready

    matrix = tmp_path / "m.toml"
    matrix.write_text(CELL_MATRIX)
    for hold, status in ((8.0, "ready"), (CONTROL_TIMEOUT + 10, "error")):
        out = tmp_path / f"report-{hold:.0f}.json"
        with slow_engine(tmp_path, hold=hold, what="containers/create") as engine:
            result = ecoready(
                "run", "--headless", "--matrix", str(matrix), "--json", str(out), env={"DOCKER_HOST": engine.url}
            )
            held = engine.held
        assert held >= 1 and "Traceback" not in result.stderr
        report = json.loads(out.read_text())
        (cell,) = report["cells"]
        assert cell["status"] == status, result.stderr[-2000:]
        if status == "error":
            assert result.returncode == 3
            stage = next(s for s in cell["stages"] if s["outcome"] == "error")
            assert stage["blame"]["cause"] == "engine-stuck", stage  # never the component's, nor its clock
            assert "sent nothing for 30 s" in stage["detail"] and engine.url in stage["detail"], stage
        else:
            assert result.returncode == 0, result.stderr[-2000:]
        assert docker_labelled(f"ecoready.run={report['run_id']}") == {"containers": [], "networks": [], "volumes": []}
