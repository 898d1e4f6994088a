"""HTTP/2 to a registry that offers it: a real docker-registry serving HTTPS with a
certificate from a throwaway CA (Go's net/http offers h2 by ALPN), trusted the way a user
trusts a private CA (`SSL_CERT_FILE`), behind a TCP front of ours that counts connections
and pipes bytes (it terminates nothing: TLS runs end to end). A cold lookup of several
references at once, then a warm one, each go over exactly one connection, every request
an HTTP/2 stream (the registry's access log says which protocol each request came in),
every answer right. The connection `ecoready images` opens early to an HTTPS registry (one:
HTTP/2 carries everything on it) is the one taken, TLS started on it.

The registry is named by this machine's host name, not 127.0.0.1 or `localhost`: ecoready
asks loopback addresses over plain HTTP (docs/matrix.md, `insecure`), every other name over
HTTPS; the front listens on the address that name resolves to."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from ecoready.domain.errors import RegistryError
from ecoready.domain.images import Availability, Verdict
from ecoready.domain.networds import TRUST_FIX
from ecoready.lab.oci_writer import RegistryWriter
from ecoready.registry.cache import DiskCache
from ecoready.registry.client import RegistryClient
from ecoready.registry.early import EarlyConnections, endpoint_of, open_early
from tests.support.registry_servers import Registry, push_tiny_index, start_registry
from tests.support.second_engine import make_certificates
from tests.support.tcp_front import CountingFront

BOTH = ("h2/one", "h2/two", "h2/three", "h2/four")
AMD64_ONLY = "h2/amd64-only"
ARCHES = ("amd64", "arm64")
PAIRS = [(repo, arch) for repo in (*BOTH, AMD64_ONLY) for arch in ARCHES]
SAFETY = 60  # seconds: a lookup that takes longer is stuck
NAME = socket.gethostname()

Expected = dict[tuple[str, str], tuple[Verdict, str]]  # (repo, arch) -> verdict, per-arch digest


def _address(name: str) -> str:
    """The address `name` resolves to first, for the front to listen on."""
    try:
        return str(socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)[0][4][0])
    except OSError as exc:
        pytest.fail(f"this machine's host name {name!r} does not resolve ({exc}): the test names its registry by it")


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Registry, Path, Expected]]:
    """Images pushed over plain HTTP, then served read-only over HTTPS from the same storage:
    (the HTTPS registry, its CA's certificate, the answer each pair should get)."""
    work = tmp_path_factory.mktemp("http2")
    storage = work / "storage"
    storage.mkdir()
    expected: Expected = {}
    writable = start_registry(work, storage)
    writer = RegistryWriter(writable.url)
    try:
        for repo in BOTH:
            push_tiny_index(writer, repo, "1")
        push_tiny_index(writer, AMD64_ONLY, "1", arches=("amd64",))
        for repo, arch in PAIRS:
            digest = writer.digest_of_tag(repo, f"1-only-{arch}")
            expected[(repo, arch)] = (Verdict.AVAILABLE, digest) if digest else (Verdict.MISSING, "")
    finally:
        writer.close()
        writable.stop()
    certs = work / "certs"
    make_certificates(certs, f"DNS:{NAME},IP:127.0.0.1")
    registry = start_registry(work, storage, readonly=True, tls=certs)
    yield registry, certs / "ca.pem", expected
    registry.stop()


@pytest.fixture
def front(registry: tuple[Registry, Path, Expected], monkeypatch: pytest.MonkeyPatch) -> Iterator[CountingFront]:
    served, ca, _ = registry
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))  # as a user trusts a private CA (docs/images.md)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    counting = CountingFront(int(served.host.rsplit(":", 1)[1]), listen=_address(NAME), name=NAME)
    yield counting
    counting.close()


async def lookups(
    front: CountingFront, cache: Path, early: EarlyConnections | None = None
) -> tuple[list[Availability], int, int]:
    """Every pair at once: (the answers, requests the client made, connections the front accepted)."""
    before = front.accepted
    async with RegistryClient(cache=DiskCache(cache), early=early) as client:
        answers = await asyncio.wait_for(
            asyncio.gather(*(client.resolve(f"{front.host}/{repo}:1", arch) for repo, arch in PAIRS)), SAFETY
        )
        return list(answers), client.http.requests, front.accepted - before


def check(answers: list[Availability], expected: Expected) -> None:
    got = {(a.reference.split("/", 1)[1].rsplit(":", 1)[0], a.arch): (a.verdict, a.digest) for a in answers}
    assert got == expected


async def test_a_registry_offering_http2_gets_every_request_on_one_connection(
    registry: tuple[Registry, Path, Expected], front: CountingFront, tmp_path: Path
) -> None:
    served, _, expected = registry
    assert expected[(AMD64_ONLY, "arm64")] == (Verdict.MISSING, "")  # not every answer the same
    assert all(v is Verdict.AVAILABLE and d for (r, _), (v, d) in expected.items() if r != AMD64_ONLY)
    seen = len(served.protocols())
    answers, requests, connections = await lookups(front, tmp_path)  # cold: tags, manifests, configs
    check(answers, expected)
    assert requests > len(PAIRS)
    assert connections == 1
    protocols = served.protocols()[seen:]
    assert protocols == ["HTTP/2.0"] * requests

    answers, warm, connections = await lookups(front, tmp_path)  # warm: the disk cache's, one HEAD per tag
    check(answers, expected)
    assert 0 < warm < requests
    assert connections == 1
    assert served.protocols()[seen + requests :] == ["HTTP/2.0"] * warm


async def test_the_connection_opened_early_carries_every_request_over_http2(
    registry: tuple[Registry, Path, Expected], front: CountingFront, tmp_path: Path
) -> None:
    served, _, expected = registry
    early = open_early([f"{front.host}/{repo}:1" for repo in (*BOTH, AMD64_ONLY)])
    async with asyncio.timeout(SAFETY):
        while front.accepted < 1:  # opened before any request is made
            await asyncio.sleep(0.01)
    seen = len(served.protocols())
    answers, requests, connections = await lookups(front, tmp_path, early)
    check(answers, expected)
    assert connections == 0 and front.accepted == 1  # the one opened early, TLS started on it
    endpoint = endpoint_of(front.host, ())
    assert endpoint is not None and early.take(endpoint) is None
    assert served.protocols()[seen:] == ["HTTP/2.0"] * requests


async def test_a_registry_whose_ca_is_not_trusted_says_so_and_how_to_trust_it(
    registry: tuple[Registry, Path, Expected], front: CountingFront, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "no-ca.pem"
    empty.write_text("")
    monkeypatch.setenv("SSL_CERT_FILE", str(empty))  # a trust store without the registry's CA
    async with RegistryClient(cache=DiskCache(tmp_path / "cache")) as client:
        with pytest.raises(RegistryError) as refused:
            await asyncio.wait_for(client.resolve(f"{front.host}/{BOTH[0]}:1", "amd64"), SAFETY)
    said = str(refused.value)
    assert said.startswith(f"{front.host}: its TLS certificate is not trusted here ("), said
    assert said.endswith(TRUST_FIX) and "unreachable" not in said
