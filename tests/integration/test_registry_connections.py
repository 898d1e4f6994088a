"""Connections kept alive: a real docker-registry holding tiny images, behind a TCP front of
ours that counts the connections it accepts and forwards bytes untouched. A warm lookup of
several references (HEADs answered from the disk cache) goes over one connection per
registry when asked in turn, and over no more connections than the client's limit when asked
all at once, each carrying several requests; before the fix, every HEAD cost a connection.
A cold lookup at once sends its first wave of requests without waiting for the registry's
first answer, and takes the connections `ecoready images` opened early instead of opening
its own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from ecoready.domain.images import Verdict
from ecoready.lab.oci_writer import RegistryWriter
from ecoready.registry.cache import DiskCache
from ecoready.registry.client import RegistryClient
from ecoready.registry.early import PER_REGISTRY, EarlyConnections, open_early
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


async def lookups(
    front: CountingFront, cache: Path, *, at_once: bool, early: EarlyConnections | None = None
) -> tuple[int, int]:
    """(requests the client made, connections the front accepted) for every pair."""
    before = front.accepted
    async with RegistryClient(cache=DiskCache(cache), early=early) as client:

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


async def test_a_cold_fan_out_sends_its_first_wave_at_once(registry: Registry, tmp_path: Path) -> None:
    """While the registry's answers are held back, the first requests of the others are
    already sent (one each, on connections of their own): a round trip sooner than asking
    once alone; no more connections than the limit in all."""
    front = CountingFront(int(registry.host.rsplit(":", 1)[1]), hold_first=0.5)
    try:
        requests, connections = await lookups(front, tmp_path, at_once=True)
    finally:
        front.close()
    wave = min(len(REPOS), PER_REGISTRY)  # one tag each, asked at once
    assert front.requests_at_first_answer == wave
    assert front.accepted_at_first_answer == wave
    assert connections <= PER_REGISTRY < requests


async def test_a_cold_fan_out_takes_the_connections_opened_early(front: CountingFront, tmp_path: Path) -> None:
    """`ecoready images` opens its registries' connections while it loads (registry/early.py):
    the lookups take them before opening any of their own."""
    early = open_early([f"{front.host}/{repo}:1" for repo in REPOS])
    async with asyncio.timeout(SAFETY):
        while front.accepted < len(REPOS):  # opened before any request is made
            await asyncio.sleep(0.01)
    assert front.requests == 0
    requests, connections = await lookups(front, tmp_path, at_once=True, early=early)
    assert connections <= PER_REGISTRY - len(REPOS) < requests  # the rest of the limit, at most
    host, port = front.host.rsplit(":", 1)
    assert early.take((host, int(port))) is None  # every one opened early was taken
