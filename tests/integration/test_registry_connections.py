"""Connections kept alive: a real docker-registry holding tiny images, behind a TCP front of
ours that counts the connections it accepts and forwards bytes untouched. A warm lookup of
several references (HEADs answered from the disk cache) goes over one connection per
registry when asked in turn, and over no more connections than the client's limit when asked
all at once, each carrying several requests; before the fix, every HEAD cost a connection.
A cold lookup at once has the connections of its fan-out opened while the registry's first
answer (which goes alone) is on its way."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from ecoready.domain.model import Verdict
from ecoready.lab.oci_writer import RegistryWriter
from ecoready.registry.cache import DiskCache
from ecoready.registry.client import RegistryClient
from ecoready.registry.transport import PER_REGISTRY
from tests.support.registry_servers import Registry, push_tiny_index, start_registry
from tests.support.tcp_front import CountingFront

REPOS = ("conn/one", "conn/two", "conn/three", "conn/four", "conn/five")
PAIRS = [(repo, arch) for repo in REPOS for arch in ("amd64", "arm64")]
SAFETY = 60  # seconds: a lookup that takes longer is stuck


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    work = tmp_path_factory.mktemp("connections")
    storage = work / "storage"
    storage.mkdir()
    registry = start_registry(work, storage)
    writer = RegistryWriter(registry.url)
    try:
        for repo in REPOS:
            push_tiny_index(writer, repo, "1")
    finally:
        writer.close()
    yield registry
    registry.stop()


@pytest.fixture
def front(registry: Registry) -> Iterator[CountingFront]:
    counting = CountingFront(int(registry.host.rsplit(":", 1)[1]))
    yield counting
    counting.close()


async def lookups(front: CountingFront, cache: Path, *, at_once: bool) -> tuple[int, int]:
    """(requests the client made, connections the front accepted) for every pair."""
    before = front.accepted
    async with RegistryClient(cache=DiskCache(cache)) as client:

        async def one(repo: str, arch: str) -> None:
            found = await client.resolve(f"{front.host}/{repo}:1", arch)
            assert found.verdict is Verdict.AVAILABLE, found

        if at_once:
            await asyncio.wait_for(asyncio.gather(*(one(r, a) for r, a in PAIRS)), SAFETY)
        else:
            for repo, arch in PAIRS:
                await asyncio.wait_for(one(repo, arch), SAFETY)
        return client.http.requests, front.accepted - before


async def test_a_warm_lookup_in_turn_reuses_one_connection(front: CountingFront, tmp_path: Path) -> None:
    await lookups(front, tmp_path, at_once=True)  # cold: fills the disk cache
    requests, connections = await lookups(front, tmp_path, at_once=False)
    assert requests == len(REPOS)  # one HEAD per tag, everything else from the disk cache
    assert connections == 1


async def test_a_warm_lookup_at_once_keeps_its_connections(front: CountingFront, tmp_path: Path) -> None:
    await lookups(front, tmp_path, at_once=True)
    requests, connections = await lookups(front, tmp_path, at_once=True)
    assert requests == len(REPOS)
    assert 1 <= connections <= min(PER_REGISTRY, len(REPOS))
    # and a cold lookup at once: many requests, no more connections than the limit
    requests, connections = await lookups(front, tmp_path / "cold", at_once=True)
    assert requests > len(REPOS)  # tags, then each arch's manifest and config
    assert connections <= PER_REGISTRY
    assert connections < requests


async def test_a_cold_fan_out_finds_its_connections_open(registry: Registry, tmp_path: Path) -> None:
    """The first request goes alone; while its answer is held back, the requests waiting
    for it have their connections opened (one each, the first request's serving one of
    them), so none waits for a handshake once the answer is in."""
    front = CountingFront(int(registry.host.rsplit(":", 1)[1]), hold_first=0.5)
    try:
        requests, connections = await lookups(front, tmp_path, at_once=True)
    finally:
        front.close()
    waiting = len(REPOS) - 1  # one tag each: the first repository's goes first, the others wait
    assert front.accepted_at_first_answer == min(waiting, PER_REGISTRY)
    assert connections <= PER_REGISTRY < requests
