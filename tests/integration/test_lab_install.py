"""The lab's package install (containers/base/apt-into, run by `Lab._install` in the
machine's own base image) on the real engine and the real Debian mirror: what it makes,
how it fails, and that its container never outlives it."""

from __future__ import annotations

import asyncio
import subprocess
import tarfile
from pathlib import Path

import pytest

from ecoready.domain.errors import EngineError
from ecoready.domain.specs import LABEL_OWNER, LABEL_ROLE
from ecoready.engine.docker_host import DockerHost
from ecoready.engine.owners import this_owner
from ecoready.engine.platform import host_arch
from ecoready.lab.build import Lab
from ecoready.lab.recipes import LabImage, base_tag, containers_dir

pytestmark = pytest.mark.docker

NATIVE = host_arch()


def ours(role: str = "", *, running: bool = False) -> list[str]:
    """This process's lab containers (a lab build running beside the tests has its own)."""
    owner = this_owner()
    labels = [f"label={LABEL_OWNER}={owner.hostname}:{owner.pid}"] + ([f"label={LABEL_ROLE}={role}"] if role else [])
    found = subprocess.run(
        ["docker", "ps", "-q" if running else "-aq", *(f for label in labels for f in ("--filter", label))],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return found.stdout.split()


async def install(image: LabImage, arch: str, work: Path, lines: list[str]) -> None:
    host = await DockerHost.connect()
    try:
        lab = Lab(host, lines.append, lab_dir=work.parent)
        native = base_tag(image.suite, NATIVE)
        context = containers_dir() / image.context
        await lab._install(image, arch, base_tag(image.suite, arch), native, context, work, work.parent / "install.log")
    finally:
        await host.close()


def test_an_arm64_install_is_done_and_checked_by_the_target_s_own_tools(lab: Path, tmp_path: Path) -> None:
    image = LabImage("install-test", "1", "app-client", "bookworm", ("sqlite3",))
    asyncio.run(install(image, "arm64", tmp_path / "work", []))
    with tarfile.open(tmp_path / "work" / "rootfs.tar") as rootfs:
        names = set(rootfs.getnames())
        status = rootfs.extractfile("./var/lib/dpkg/status")
        assert status is not None
        text = status.read().decode()
    assert "./usr/bin/sqlite3" in names and "./Dockerfile" not in names
    # the target's arch stays its native one: no arch list left by the foreign dpkg
    assert "./var/lib/dpkg/arch" not in names and "./.dockerenv" not in names
    # the machine's /proc, mounted there for the maintainer scripts, stays out
    assert not [name for name in names if name.startswith("./proc/")]
    assert "Package: sqlite3\nStatus: install ok installed" in text
    assert "Architecture: amd64" not in text
    assert not (tmp_path / "work" / "base.tar").exists() and not (tmp_path / "work" / "apt-into").exists()
    assert (tmp_path / "work" / "Dockerfile").is_file()  # the context's own files


def test_a_pin_the_mirror_no_longer_has_stops_with_one_line(lab: Path, tmp_path: Path) -> None:
    image = LabImage("install-test", "1", "app-client", "bookworm", ("bash=0.0-0",))
    lines: list[str] = []
    with pytest.raises(EngineError, match="installing the packages of install-test:1 for"):
        asyncio.run(install(image, NATIVE, tmp_path / "work", lines))
    log = (tmp_path / "install.log").read_text()
    assert "lab: bash 0.0-0 is no longer on the Debian mirror (it has 5." in log
    assert any("no longer on the Debian mirror" in line for line in lines)  # the tail is shown
    assert ours() == []


def test_an_install_cancelled_midway_leaves_no_container(lab: Path, tmp_path: Path) -> None:
    image = LabImage("install-test", "1", "app-client", "bookworm", ("sqlite3",))

    async def cancel_when_it_runs() -> None:
        task = asyncio.ensure_future(install(image, "arm64", tmp_path / "work", []))
        for _ in range(600):
            await asyncio.sleep(0.1)
            if ours("lab-install", running=True):
                await asyncio.sleep(1.0)  # its apt at work: the cancel lands on the running container
                break
        else:
            pytest.fail("the install's container never appeared")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_when_it_runs())
    assert ours() == []
