"""Container files through a bind mount on the real engine (app/engine/filedrop.py): the files
are there, read-only, with their modes; later files appear without an engine call; the
host directory goes with the container; and without a drop the archive API still works."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ecoready.domain.specs import LABEL_RUN, ContainerSpec, SecretFile
from ecoready.engine.docker_host import DockerHost
from ecoready.lab.recipes import IMAGES, image_tag
from tests.support.cli import TEST_LABEL_KEY, TEST_SESSION

pytestmark = pytest.mark.docker

UNDER = "/run/ecoready"


def tools_image() -> str:
    (image,) = [i for i in IMAGES if i.name == "tools"]
    return image_tag(image, "amd64")


def extractions(since: float, container_id: str) -> int:
    """The engine's archive extractions into a container since a time (`docker events`)."""
    window = ["--since", f"{since:.3f}", "--until", f"{time.time():.3f}"]
    only = ["--filter", "event=extract-to-dir", "--filter", f"container={container_id}"]
    out = subprocess.run(
        ["docker", "events", *window, *only, "--format", "{{.Actor.ID}}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    return len(out.split())


async def with_host(scenario: Callable[[DockerHost], Any], *, drop: bool) -> Any:
    host = await DockerHost.connect()
    if not drop:
        host.drop = None
    try:
        return await scenario(host)
    finally:
        await host.close()


def spec(name: str) -> ContainerSpec:
    return ContainerSpec(
        image=tools_image(),
        name=name,
        labels={LABEL_RUN: "filedrop-test", TEST_LABEL_KEY: TEST_SESSION},
        command=("sleep", "300"),
        entrypoint=(),
        files=(
            SecretFile(f"{UNDER}/root-password", b"pw-1"),
            SecretFile(f"{UNDER}/sysbench/client.cfg", b"cfg", 0o400),
            SecretFile("/etc/ecoready-test.conf", b"conf"),
        ),
        files_dir=UNDER,
    )


async def sh(host: DockerHost, cid: str, script: str) -> str:
    result = await host.exec(cid, ["sh", "-c", script], timeout=30)
    return result.stdout.strip() + ("" if result.ok else f" (exit {result.exit_code})")


@pytest.mark.parametrize("drop", [True, False], ids=["bind-mount", "archive-api"])
def test_files_reach_the_container_either_way(lab: Path, drop: bool, no_leaks: None) -> None:
    since = time.time() - 1

    async def scenario(host: DockerHost) -> tuple[str, dict[str, str], Path | None]:
        if drop:
            assert host.drop is not None, "this machine's dockerd shares our files: the drop must be used"
        cid = await host.run(spec(f"ecoready-filedrop-test-{'bind' if drop else 'archive'}"))
        try:
            seen = {
                "files": await sh(
                    host, cid, f"cat {UNDER}/root-password {UNDER}/sysbench/client.cfg /etc/ecoready-test.conf"
                ),
                "modes": await sh(host, cid, f"stat -c %a {UNDER}/root-password {UNDER}/sysbench/client.cfg"),
            }
            await host.put_files(cid, [SecretFile(f"{UNDER}/later.sql", b"select 1")])
            seen["later"] = await sh(host, cid, f"cat {UNDER}/later.sql")
            seen["write"] = await sh(host, cid, f"echo x > {UNDER}/tampered 2>/dev/null && echo wrote")
            directory = host.drop.directory("ecoready-filedrop-test-bind") if drop and host.drop else None
            if directory is not None:
                assert (directory / "root-password").read_bytes() == b"pw-1"
        finally:
            await host.remove_container(cid)
        return cid, seen, directory

    cid, seen, directory = asyncio.run(with_host(scenario, drop=drop))
    assert seen["files"] == "pw-1cfgconf", seen
    assert seen["modes"].split() == ["444", "400"]
    assert seen["later"] == "select 1"
    if drop:
        assert "wrote" not in seen["write"], "the secrets directory must be read-only in the container"
        # one extraction: the file outside the secrets directory; the later file needed none
        assert extractions(since, cid) == 1
        assert directory is not None and not directory.exists()
    else:
        assert extractions(since, cid) == 2  # all three files at the start, then the later one
