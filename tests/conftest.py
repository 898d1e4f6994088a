"""Shared fixtures. Tests that need the engine and the lab fail loudly when they are not
there: `make test` sets both up, and a skipped test would hide a broken setup."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

# Every run these tests start (in-process or as a subprocess) carries this label, so leak
# checks look only at this test session's resources even when other runs share the engine.
TEST_LABEL_KEY = "ecoready-test.session"
TEST_SESSION = uuid.uuid4().hex[:12]
os.environ["ECOREADY_LABELS"] = f"{TEST_LABEL_KEY}={TEST_SESSION}"

ROOT = Path(__file__).resolve().parents[1]
LAB_MATRIX = ROOT / "containers" / "lab.toml"


def docker_labelled(label: str) -> dict[str, list[str]]:
    """ids of containers, networks and volumes carrying `label` (e.g. ecoready.run=<id>)."""
    out = {}
    for kind, cmd in (
        ("containers", ["docker", "ps", "-aq"]),
        ("networks", ["docker", "network", "ls", "-q"]),
        ("volumes", ["docker", "volume", "ls", "-q"]),
    ):
        result = subprocess.run(
            [*cmd, "--filter", f"label={label}"], capture_output=True, text=True, timeout=30, check=True
        )
        out[kind] = result.stdout.split()
    return out


@pytest.fixture(scope="session")
def lab() -> Path:
    """The lab is built and its registry serves: else fail with the command that fixes it."""
    from app.lab import IMAGES, REGISTRY, image_tag, registry_running

    if subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode != 0:
        pytest.fail("the docker engine does not answer: run `make test` (it starts it) or `make setup`")
    if not registry_running():
        pytest.fail(f"the lab registry on {REGISTRY} is down: run `make lab` or `ecoready lab up`")
    for image in IMAGES:
        for arch in image.arches:
            found = subprocess.run(
                ["docker", "image", "inspect", image_tag(image, arch)], capture_output=True, timeout=20
            )
            if found.returncode != 0:
                pytest.fail(f"lab image {image_tag(image, arch)} is missing: run `make lab`")
    return LAB_MATRIX


@pytest.fixture(scope="session")
def lab_gaps(lab: Path) -> Path:
    """The lab with its deliberate availability gaps published (`ecoready lab build` does it)."""
    from app.lab import REGISTRY
    from app.labgaps import gap_status
    from app.oci import RegistryWriter

    writer = RegistryWriter(f"http://{REGISTRY}", timeout=10)
    try:
        stale = [name for name, current in gap_status(writer) if not current]
    finally:
        writer.close()
    if stale:
        pytest.fail(f"lab gaps not published ({', '.join(stale)}): run `ecoready lab build --only gaps`")
    return lab


def ecoready(*args: str, timeout: float = 900, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the installed console script the way a user would."""
    exe = Path(sys.executable).with_name("ecoready")
    return subprocess.run(
        [str(exe), *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}, cwd=ROOT
    )


def one_image_matrix(directory: Path, image: str, component: str = "m") -> Path:
    """A matrix file with one server component of `image`."""
    path = directory / f"{component}.toml"
    path.write_text(f'[[components]]\nid = "{component}"\ncategory = "server"\nprobe = "server"\nimage = "{image}"\n')
    return path


@pytest.fixture
def no_leaks() -> Iterator[None]:
    """After the test, nothing any run of this test session labelled is left on the engine."""
    yield
    left = docker_labelled(f"{TEST_LABEL_KEY}={TEST_SESSION}")
    assert left == {"containers": [], "networks": [], "volumes": []}, f"leaked: {left}"


def run_async(coro):
    return asyncio.run(coro)
