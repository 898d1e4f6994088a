"""One driver install per key on an engine (app/probe_api/install_cache.py), on the real
engine: two runs that start the same install at once install it once; a run that finds
another process's installer waits for it and takes its image without running its own
script; a dead process's leftover installer holds nobody up."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from ecoready.domain.blame import Cause
from ecoready.domain.errors import RegistryError
from ecoready.domain.specs import LABEL_OWNER, LABEL_OWNER_START, LABEL_RUN, ContainerSpec
from ecoready.engine.docker_host import DockerHost
from ecoready.engine.owners import this_owner
from ecoready.lab.recipes import IMAGES, image_tag
from ecoready.probe_api.install_cache import (
    CACHE_REPOSITORY,
    LABEL_INSTALLING,
    Installed,
    InstallJob,
    install_once,
    installers,
)
from tests.support.cli import TEST_LABEL_KEY, TEST_SESSION

pytestmark = pytest.mark.docker

RUN = "install-claims-test"


def tools_image() -> str:
    (image,) = [i for i in IMAGES if i.name == "tools"]
    return image_tag(image, "amd64")


@pytest.fixture
def key() -> Iterator[str]:
    """A key no earlier run has cached; its image is removed afterwards."""
    key = uuid.uuid4().hex
    yield key
    subprocess.run(["docker", "rmi", "-f", f"{CACHE_REPOSITORY}:{key}"], capture_output=True, timeout=60)


def labels() -> dict[str, str]:
    me = this_owner()
    return {
        LABEL_RUN: RUN,
        TEST_LABEL_KEY: TEST_SESSION,
        LABEL_OWNER: f"{me.hostname}:{me.pid}",
        LABEL_OWNER_START: me.start,
    }


async def one_install(host: DockerHost, key: str, script: str, name: str) -> Installed:
    job = InstallJob(tools_image(), key, "test:claims", script, {}, name, labels(), 120)
    return await install_once(host, job)


async def with_host(scenario: Any) -> Any:
    host = await DockerHost.connect()
    try:
        return await scenario(host)
    finally:
        await host.close()


def test_two_runs_starting_the_same_install_at_once_install_it_once(key: str) -> None:
    async def scenario(host: DockerHost) -> list[Installed]:
        script = "sleep 2; echo 'ecoready-label: how=by the test'"
        names = [f"ecoready-claims-{key[:8]}-{n}" for n in (1, 2)]
        return list(await asyncio.gather(*(one_install(host, key, script, name) for name in names)))

    done = asyncio.run(with_host(scenario))
    assert sorted(d.cached for d in done) == [False, True]
    assert done[0].image_id == done[1].image_id != ""
    assert all(d.labels == {"ecoready.install.how": "by the test"} for d in done)


def test_a_run_waits_for_another_process_s_installer_and_takes_its_image(key: str) -> None:
    other = textwrap.dedent(
        f"""
        import asyncio
        from tests.integration.test_install_claims import one_install, with_host
        SCRIPT = "sleep 6; echo 'ecoready-label: by=the other'"
        async def scenario(host):
            return await one_install(host, {key!r}, SCRIPT, "ecoready-claims-{key[:8]}-o")
        print(asyncio.run(with_host(scenario)).cached)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", other], stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
    try:

        async def scenario(host: DockerHost) -> tuple[Installed, float]:
            async with asyncio.timeout(60):
                while not await installers(host, key):
                    await asyncio.sleep(0.2)
            started = time.monotonic()
            # a script that fails: it must not run, the other process's image is taken
            done = await one_install(host, key, "exit 3", f"ecoready-claims-{key[:8]}-w")
            return done, time.monotonic() - started

        done, waited = asyncio.run(with_host(scenario))
        out, _ = process.communicate(timeout=120)
    finally:
        process.kill()
    assert out.strip() == "False"  # the other process installed
    assert done.cached and done.image_id != ""
    assert done.labels == {"ecoready.install.by": "the other"}
    assert waited > 2  # it waited for the other's six-second script


def test_a_dead_process_s_leftover_installer_holds_nobody_up(key: str) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()

    async def scenario(host: DockerHost) -> tuple[Installed, float]:
        me = this_owner()
        leftover = ContainerSpec(
            image=tools_image(),
            name=f"ecoready-claims-{key[:8]}-dead",
            labels={**labels(), LABEL_OWNER: f"{me.hostname}:{dead.pid}", LABEL_INSTALLING: key},
            command=("sleep", "300"),
        )
        container = await host.run(leftover)
        try:
            started = time.monotonic()
            done = await one_install(host, key, "true", f"ecoready-claims-{key[:8]}-l")
            return done, time.monotonic() - started
        finally:
            await host.remove_container(container)

    done, seconds = asyncio.run(with_host(scenario))
    assert not done.cached and done.image_id != ""
    assert seconds < 30


def test_a_registry_whose_name_the_installer_cannot_resolve_is_the_networks_not_the_packages(key: str) -> None:
    # `.invalid` never resolves (RFC 2606): the installer's own getent says so before the
    # script runs, where pip would say "No matching distribution" and the driver be blamed
    job = InstallJob(
        tools_image(), key, "pypi:PyMySQL 1.1.3", "touch /ran", {}, f"ecoready-claims-{key[:8]}-dns", labels(), 120
    )
    job = replace(job, reaches=("https://pypi.registry.invalid/simple", "https://pypi.org"))

    async def scenario(host: DockerHost) -> None:
        await install_once(host, job)

    with pytest.raises(RegistryError) as caught:
        asyncio.run(with_host(scenario))
    assert caught.value.cause is Cause.REGISTRY and caught.value.registry == "pypi.registry.invalid"
    assert "does not resolve in the engine's containers" in caught.value.reason
    assert "pypi:PyMySQL 1.1.3" in caught.value.reason
    cached = subprocess.run(["docker", "images", "-q", f"{CACHE_REPOSITORY}:{key}"], capture_output=True, text=True)
    assert cached.stdout.strip() == ""  # nothing installed, nothing cached
    left = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"name=ecoready-claims-{key[:8]}-dns"], capture_output=True, text=True
    )
    assert left.stdout.strip() == ""  # the installer removed
