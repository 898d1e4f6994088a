"""A registry over HTTPS, as public ones are: a real docker-registry with a certificate of
ours (trusted through $SSL_CERT_FILE, which OpenSSL's default paths read) on an address of
this machine that is not loopback (a loopback registry is asked over plain HTTP). It
answers over HTTP/2 (Go's server offers it with TLS): the lookups of several references at
once share one connection, and that connection is the one `ecoready images` opened early
(registry/early.py), TLS started on it."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ecoready.domain.model import Verdict
from ecoready.lab.oci_writer import RegistryWriter
from ecoready.registry.cache import DiskCache
from ecoready.registry.client import RegistryClient
from ecoready.registry.early import PER_REGISTRY_H2, endpoint_of, open_early
from tests.support.registry_servers import REGISTRY_BIN, push_tiny_index, start_registry

REPOS = ("tls/one", "tls/two", "tls/three")


def local_address() -> str | None:
    """An IPv4 address of this machine that is not loopback (the route's source), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: no packet is sent for a UDP connect
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if ipaddress.ip_address(address).is_loopback else address


@pytest.fixture(scope="module")
def tls_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(host:port of a docker-registry over HTTPS holding tiny indexes, its certificate)."""
    address = local_address()
    if address is None:
        pytest.skip("this machine has no address but loopback to serve HTTPS on")
    work = tmp_path_factory.mktemp("tls")
    storage = work / "storage"
    storage.mkdir()
    plain = start_registry(work, storage)  # to push through (the HTTPS one serves its storage)
    writer = RegistryWriter(plain.url)
    try:
        for repo in REPOS:
            push_tiny_index(writer, repo, "1")
    finally:
        writer.close()
        plain.stop()
    cert, key = work / "cert.pem", work / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=ecoready-tls"),
            *("-keyout", str(key), "-out", str(cert), "-addext", f"subjectAltName=IP:{address}"),
        ],
        check=True,
        capture_output=True,
    )
    with socket.socket() as sock:
        sock.bind((address, 0))
        port = int(sock.getsockname()[1])
    config = work / "tls.yml"
    config.write_text(
        f"version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {storage}\n"
        f"http:\n  addr: {address}:{port}\n  tls:\n    certificate: {cert}\n    key: {key}\n"
    )
    log = (work / "tls.log").open("ab")
    proc = subprocess.Popen([REGISTRY_BIN, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
    host = f"{address}:{port}"
    try:
        deadline = time.monotonic() + 20
        trust = ssl.create_default_context(cafile=str(cert))
        while True:
            try:
                if httpx.get(f"https://{host}/v2/", verify=trust, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
            time.sleep(0.1)
        yield host, cert
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


async def test_an_https_registry_is_asked_over_one_http2_connection_opened_early(
    tls_registry: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, cert = tls_registry
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    references = [f"{host}/{repo}:1" for repo in REPOS]
    early = open_early(references)
    endpoint = endpoint_of(host, ())
    assert endpoint is not None
    async with RegistryClient(cache=DiskCache(tmp_path), early=early) as client:
        found = await asyncio.wait_for(
            asyncio.gather(*(client.resolve(ref, arch) for ref in references for arch in ("amd64", "arm64"))), 60
        )
        assert [f.verdict for f in found] == [Verdict.AVAILABLE] * 6
        assert early.take(endpoint) is None  # the one opened early was taken, TLS started on it
        # answered over HTTP/2: the registry's requests at once became streams of that connection
        assert client.http._slots[host].size == PER_REGISTRY_H2
        (status,) = client.statuses()
        assert status.error == "" and status.requests > len(REPOS)
