"""The lab's package install (containers/base/apt-into, run by `Lab._install` in the
machine's own base image) on the real engine and the real Debian mirror: what it makes,
how it fails, and that its container never outlives it."""

from __future__ import annotations

import asyncio
import hashlib
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
from ecoready.lab.native_tools import NATIVE_DIR, RUNTIME
from ecoready.lab.recipes import ARCHES, IMAGES, LabImage, base_tag, containers_dir

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
    assert not (tmp_path / "work" / "native-tools").exists()
    assert (tmp_path / "work" / "Dockerfile").is_file()  # the context's own files


def _files(rootfs: Path) -> dict[str, str]:
    """name -> md5 of every regular file in a tar (hard links as their target's name)."""
    out = {}
    with tarfile.open(rootfs) as tar:
        for member in tar.getmembers():
            if member.isfile():
                data = tar.extractfile(member)
                assert data is not None
                out[member.name] = hashlib.md5(data.read()).hexdigest()  # a checksum, not security
            elif member.islnk():
                out[member.name] = f"link:{member.linkname}"
    return out


# written with times in them: they differ between any two installs. apt's two caches are no
# part of what an install makes: apt-into removes them, then its closing `apt-get check`
# builds them again from the package lists (pkgcache.bin holds their times; srcpkgcache.bin,
# made alongside, differs between two installs now and then: once in 210 tests), and apt
# rebuilds them whenever it finds them stale. Both are in the result; neither is compared.
_TIMED = {
    "./var/cache/apt/pkgcache.bin",
    "./var/cache/apt/srcpkgcache.bin",
    "./var/cache/ldconfig/aux-cache",
    "./var/log/alternatives.log",
}


def test_maintainer_scripts_tools_run_natively_and_change_nothing_in_the_result(
    lab: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ucf's maintainer scripts run debconf (perl), sed, grep and coreutils
    image = LabImage("install-test", "1", "app-client", "bookworm", ("ucf", "sqlite3"))
    results = {}
    for native_tools in ("1", "0"):
        monkeypatch.setenv("ECOREADY_LAB_NATIVE_TOOLS", native_tools)
        work = tmp_path / native_tools / "work"
        asyncio.run(install(image, "arm64", work, []))
        results[native_tools] = _files(work / "rootfs.tar")
        log = (work.parent / "install.log").read_text()
        assert ("maintainer-script tools run natively" in log) == (native_tools == "1")
    fast, plain = results["1"], results["0"]
    assert "./usr/bin/ucf" in fast
    # nothing of this machine's is left in the image, and the target's own tools, put back,
    # are not part of the install's layer (perl5.36.0 is a hard link of perl)
    assert not [n for n in fast if n.lstrip("./").startswith((NATIVE_DIR, RUNTIME[NATIVE][0]))]
    assert not {"./usr/bin/sed", "./usr/bin/perl", "./usr/bin/perl5.36.0", "./usr/bin/dash"} & set(fast)
    assert sorted(fast) == sorted(plain)
    assert {n for n in fast if fast[n] != plain[n]} <= _TIMED


@pytest.mark.parametrize("suite", sorted({image.suite for image in IMAGES}))
def test_a_foreign_base_keeps_nothing_of_the_machine_s_tools(lab: Path, suite: str) -> None:
    """Its maintainer scripts ran this machine's tools (containers/base/native-chroot): none
    of them, nor their loader and libraries, is left, and its own tools are its arch's."""
    foreign = next(arch for arch in ARCHES if arch != NATIVE)
    left = f"/{NATIVE_DIR} /{RUNTIME[NATIVE][0]}"
    script = (
        f"for p in {left}; do [ ! -e $p ] && [ ! -L $p ] || echo left: $p; done; "
        "dpkg --audit; for t in sed dash perl; do od -An -tx1 -j18 -N2 /usr/bin/$t; done"
    )
    found = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", base_tag(suite, foreign), "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0, found.stderr
    machine = {"amd64": "3e 00", "arm64": "b7 00"}[foreign]  # ELF e_machine
    assert found.stdout.split("\n")[:-1] == [f" {machine}"] * 3, found.stdout


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
