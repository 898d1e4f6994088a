"""The lab's builder mechanism on the real engine: the connectors builder's /out is copied
out of a never-started container into a generated build context, with every arch's
binaries really compiled for that arch, and the copying container is gone afterwards."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from ecoready.engine.docker_host import DockerHost
from ecoready.lab.build import Lab
from ecoready.lab.recipes import ARCHES, IMAGES
from tests.support.cli import ROOT, docker_labelled, ecoready

pytestmark = pytest.mark.docker

# ELF e_machine (bytes 18-19, little endian) of each lab arch
E_MACHINE = {"amd64": 0x3E, "arm64": 0xB7, "ppc64le": 0x15, "s390x": 0x16}


def elf_machine(path: Path) -> int:
    head = path.read_bytes()[:20]
    assert head[:4] == b"\x7fELF", f"{path} is not an ELF binary"
    return int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")


def test_the_connectors_context_carries_every_arch_s_binaries(lab: Path, tmp_path: Path) -> None:
    (image,) = [i for i in IMAGES if i.name == "connectors"]

    async def generate() -> Path:
        host = await DockerHost.connect()
        try:
            return await Lab(host, lambda _: None, lab_dir=tmp_path).build_context(image)
        finally:
            await host.close()

    before = docker_labelled("ecoready.role=lab-copy-out")["containers"]
    context = asyncio.run(generate())
    assert context.is_relative_to(tmp_path)
    assert (context / "Dockerfile").is_file() and (context / "bin" / "smoke-python").is_file()
    assert not (context / "builder").exists()  # the builder's own sources stay out
    for arch in ARCHES:
        for program in ("smoke-c", "smoke-cpp", "smoke-go"):
            binary = context / "out" / arch / program
            assert elf_machine(binary) == E_MACHINE[arch], (arch, program)
            assert binary.stat().st_mode & 0o111, f"{binary} is not executable"
    assert (context / "out" / "java" / "EcoreadySmoke.class").read_bytes()[:4] == b"\xca\xfe\xba\xbe"
    assert docker_labelled("ecoready.role=lab-copy-out")["containers"] == before


def test_lab_status_tells_an_image_whose_recipe_changed_from_a_current_one(lab: Path, tmp_path: Path) -> None:
    # `make demo` reads this exit code to choose one run (a current lab) or answering early
    current = ecoready("lab", "status")
    assert current.returncode == 0, current.stdout + current.stderr
    assert "out of date" not in current.stdout
    assert "  lab/tools:bookworm amd64: built, published" in current.stdout.splitlines()

    changed = tmp_path / "containers"
    shutil.copytree(ROOT / "containers", changed)
    with (changed / "tools" / "Dockerfile").open("a") as dockerfile:
        dockerfile.write("# a change of recipe\n")
    stale = ecoready("lab", "status", env={"ECOREADY_CONTAINERS": str(changed)})
    assert stale.returncode == 1, stale.stdout + stale.stderr
    lines = stale.stdout.splitlines()
    for arch in ARCHES:
        assert f"  lab/tools:bookworm {arch}: built, out of date, published" in lines
    # the other images' recipes did not change
    assert [line for line in lines if "out of date" in line and "lab/tools:" not in line] == []
