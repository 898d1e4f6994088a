"""Every user of the one single-flight (app/domain/flight.py), each with a first asker
cancelled mid-way (its own budget spent) while a second asker waits for the same work: the
second gets its answer, the work was done once and never cancelled. Images (the run's
image store), registry lookups, tag lists and tokens (over real HTTP to a registry served
in this process), build audits, the lab's build contexts; packages are in
tests/unit/test_package_manners.py, beside the package registry they are asked of. No
engine: the engine's pulls and file reads are the seams' fakes, held until the test lets
them answer (tests/integration/test_images.py has the image store's case with an engine)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, cast

import pytest

from ecoready.domain.images import Availability, ImageInfo, Verdict
from ecoready.domain.specs import ImageFile
from ecoready.lab.build import Lab
from ecoready.lab.recipes import Builder, LabImage, image_named
from ecoready.registry.client import RegistryClient
from ecoready.registry.image_store import ImageStore
from ecoready.registry.manifests import parse_reference
from ecoready.run.audit_stage import AuditCache, Auditor
from tests.support.fake_host import FakeHostImages, rig
from tests.support.flights import BUDGET, Held, first_cancelled, serving


# -- images ---------------------------------------------------------------------------------
class HeldPulls(Held):
    """An engine's pulls (`EngineImages.pull`), ending when the test says so."""

    async def pull(self, reference: str, platform: str) -> str:
        await self.wait()
        return "sha256:" + "e" * 64

    async def image_platform(self, image: str) -> tuple[str, str]:
        return "linux", "arm64"


@dataclass
class PullingHost:
    images: HeldPulls = field(default_factory=HeldPulls)


class Published(RegistryClient):
    """A registry where every image is published for every arch (answered without a request)."""

    async def resolve(self, reference: str, arch: str) -> Availability:
        digest = "sha256:" + "d" * 64
        return Availability(reference, arch, Verdict.AVAILABLE, digest=digest, pull_reference=f"x@{digest}")


def test_images_a_cell_out_of_budget_mid_pull_never_cancels_another_cell_waiting() -> None:
    async def scenario() -> ImageInfo:
        host = PullingHost()
        store = ImageStore(host, Published(cache=False))
        info = await first_cancelled(lambda: store.ensure("lab/mariadb:10.11", "arm64"), host.images.release.set)
        assert (host.images.calls, host.images.cancelled) == (1, 0)
        assert await store.ensure("lab/mariadb:10.11", "arm64") == info  # remembered: no second pull
        assert host.images.calls == 1
        return info

    assert asyncio.run(scenario()).image_id == "sha256:" + "e" * 64


def test_images_a_pull_nobody_waits_for_any_more_is_stopped() -> None:
    async def scenario() -> None:
        host = PullingHost()
        store = ImageStore(host, Published(cache=False))
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(BUDGET):
                await store.ensure("lab/mariadb:10.11", "arm64")
        assert host.images.cancelled == 1  # stopped before the asker's timeout returned
        host.images.release.set()
        await store.ensure("lab/mariadb:10.11", "arm64")  # a later cell pulls afresh
        assert host.images.calls == 2

    asyncio.run(scenario())


# -- registry lookups, tag lists and tokens ---------------------------------------------------
MANIFEST = json.dumps(
    {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "layers": []}
).encode()
OCI = "application/vnd.oci.image.manifest.v1+json"


@dataclass
class HeldRegistry:
    """A registry over real HTTP whose answers to `held` paths wait for `gate`. With
    `tokens` (handed out in turn by its own token service, `/token`) it wants a Bearer token
    it issued and has not `expired`."""

    held: set[str] = field(default_factory=set)
    gate: threading.Event = field(default_factory=threading.Event)
    asked: list[str] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    issued: set[str] = field(default_factory=set)
    expired: set[str] = field(default_factory=set)
    host: str = ""

    def answer(self, path: str, auth: str) -> tuple[int, dict[str, str], bytes]:
        if path.startswith("/token"):
            token = self.tokens.pop(0)
            self.issued.add(token)
            return 200, {"Content-Type": "application/json"}, json.dumps({"token": token}).encode()
        if (self.tokens or self.issued) and auth.removeprefix("Bearer ") not in self.issued - self.expired:
            return 401, {"WWW-Authenticate": f'Bearer realm="http://{self.host}/token",service="held"'}, b""
        if "/manifests/" in path:
            digest = "sha256:" + hashlib.sha256(MANIFEST).hexdigest()
            return 200, {"Content-Type": OCI, "Docker-Content-Digest": digest}, MANIFEST
        if path.endswith("/tags/list?n=1000"):
            return 200, {"Content-Type": "application/json"}, json.dumps({"name": "x", "tags": ["1", "2"]}).encode()
        return 404, {}, b""


@pytest.fixture
def registry() -> Iterator[HeldRegistry]:
    fake = HeldRegistry()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def handle_one(self) -> None:
            fake.asked.append(self.path)
            if any(self.path.startswith(held) for held in fake.held):
                fake.gate.wait(10)
            status, headers, body = fake.answer(self.path, self.headers.get("Authorization", ""))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_HEAD = handle_one

        def log_message(self, format: str, *args: object) -> None:
            pass

    with serving(Handler, fake.gate) as fake.host:
        yield fake


def client_of(fake: HeldRegistry) -> RegistryClient:
    return RegistryClient(insecure=(fake.host,), cache=False)


def test_registry_lookup_of_a_tag_outlives_a_first_asker_out_of_budget(registry: HeldRegistry) -> None:
    registry.held.add("/v2/lab/x/manifests/1")
    ref = parse_reference(f"{registry.host}/lab/x:1")

    async def scenario() -> None:
        async with client_of(registry) as client:
            found = await first_cancelled(lambda: client.lookup(ref), registry.gate.set)
            assert found is not None and found.media_type == OCI

    asyncio.run(scenario())
    assert registry.asked == ["/v2/lab/x/manifests/1"]  # asked once, for both askers


def test_registry_tag_list_outlives_a_first_asker_out_of_budget(registry: HeldRegistry) -> None:
    registry.held.add("/v2/lab/x/tags/list")

    async def scenario() -> None:
        async with client_of(registry) as client:
            tags = await first_cancelled(lambda: client.tags(f"{registry.host}/lab/x:1"), registry.gate.set)
            assert tags == ("1", "2")

    asyncio.run(scenario())
    assert registry.asked == ["/v2/lab/x/tags/list?n=1000"]


def test_registry_token_outlives_a_first_asker_out_of_budget(registry: HeldRegistry) -> None:
    """Two tags of one repository: two lookups, one token (its scope is the repository's)."""
    registry.tokens = ["t1"]
    registry.held.add("/token")
    tag = [parse_reference(f"{registry.host}/lab/x:{n}") for n in (1, 2)]

    async def scenario() -> None:
        async with client_of(registry) as client:
            found = await first_cancelled(
                lambda: client.lookup(tag[0]), registry.gate.set, second_ask=lambda: client.lookup(tag[1])
            )
            assert found is not None

    asyncio.run(scenario())
    assert [path.split("?")[0] for path in registry.asked].count("/token") == 1


def test_registry_an_expired_token_is_asked_afresh_not_served_again(registry: HeldRegistry) -> None:
    """A token the registry refuses (expired) is dropped and a fresh one asked: the flight of
    tokens remembers none (the transport's table of tokens is the memo, and forgets it)."""
    registry.tokens = ["t1", "t2"]

    async def scenario() -> None:
        async with client_of(registry) as client:
            assert await client.lookup(parse_reference(f"{registry.host}/lab/x:1")) is not None
            registry.expired.add("t1")
            assert await client.lookup(parse_reference(f"{registry.host}/lab/x:2")) is not None

    asyncio.run(scenario())
    assert [path.split("?")[0] for path in registry.asked].count("/token") == 2
    assert registry.tokens == []


# -- build audits -----------------------------------------------------------------------------
class HeldFiles(FakeHostImages):
    """An engine that hands the programs over when the test says so."""

    def __init__(self) -> None:
        super().__init__()
        self.held = Held()

    async def read_files(
        self,
        image: str,
        choices: Sequence[Sequence[str]],
        *,
        labels: Mapping[str, str],
        max_bytes: int,
        timeout: float,
    ) -> list[ImageFile | None]:
        await self.held.wait()
        return [None for _ in choices]


def test_audits_a_cell_out_of_budget_never_cancels_another_cell_reading_the_same_image(tmp_path: Path) -> None:
    image = ImageInfo("lab/mariadb:10.11", "arm64", digest="sha256:" + "a" * 64, image_id="sha256:" + "b" * 64)
    programs = (("mariadbd", "mysqld"),)

    async def scenario() -> str:
        r = rig()
        files = HeldFiles()
        r.host.images = files
        auditor = Auditor(r.events.append, AuditCache(tmp_path))
        detail = await first_cancelled(
            lambda: auditor.audit(r.run, "db2/arm64", "local", image, programs), files.held.release.set
        )
        assert (files.held.calls, files.held.cancelled) == (1, 0)
        return detail

    assert asyncio.run(scenario()).endswith(" (cached)")  # read for another cell: the first


# -- the lab's build contexts ----------------------------------------------------------------
class HeldContexts(Lab):
    """A lab whose build contexts are made when the test says so (no engine)."""

    held: Held

    async def _generate_context(self, image: LabImage, builder: Builder | None) -> Path:
        await self.held.wait()
        made = self.lab_dir / f"context-{image.name}-{image.tag}"
        made.mkdir()
        return made


async def test_lab_one_arch_track_stopped_leaves_the_build_context_to_the_other(tmp_path: Path) -> None:
    lab = HeldContexts(cast(Any, None), lambda line: None, mirror="http://mirror.invalid/debian", lab_dir=tmp_path)
    lab.held = Held()
    image = image_named("mariadb:10.11")  # it copies files into its context: a context is made
    made = await first_cancelled(lambda: lab.build_context(image), lab.held.release.set)
    assert made.is_dir() and (lab.held.calls, lab.held.cancelled) == (1, 0)
    assert await lab.build_context(image) == made  # once per build
    await lab.drop_contexts()
    assert not made.exists()
