"""Failed connections said in the user's words, from real sockets: never an exception's
class name or an errno."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import threading
from pathlib import Path

import httpx
import pytest

from ecoready.domain.errors import RegistryError
from ecoready.domain.networds import TRUST_FIX, NetFailure, failure_kind, network_words, unreachable
from tests.support.second_engine import make_certificates


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def failure(url: str) -> BaseException:
    async with httpx.AsyncClient(timeout=5) as client:
        try:
            await client.get(url)
        except httpx.HTTPError as exc:
            return exc
    raise AssertionError(f"{url} answered")


def test_a_refused_connection_is_said_as_such() -> None:
    exc = asyncio.run(failure(f"http://127.0.0.1:{closed_port()}/v2/"))
    assert type(exc).__name__ == "ConnectError"  # what the library raises ...
    assert network_words(exc) == "connection refused"  # ... and what the user reads


def test_a_name_that_does_not_resolve_is_said_as_such() -> None:
    exc = asyncio.run(failure("http://nowhere.invalid/v2/"))  # .invalid never resolves (RFC 6761)
    assert failure_kind(exc) is NetFailure.NAME and network_words(exc) == "cannot resolve the name"


def test_a_silent_server_times_out() -> None:
    with socket.socket() as server:  # listens, never accepts nor answers
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port = server.getsockname()[1]

        async def ask() -> BaseException:
            async with httpx.AsyncClient(timeout=0.5) as client:
                try:
                    await client.get(f"http://127.0.0.1:{port}/")
                except httpx.HTTPError as exc:
                    return exc
            raise AssertionError("answered")

        assert network_words(asyncio.run(ask())) == "timed out"


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (socket.gaierror(-2, "Name or service not known"), NetFailure.NAME),
        (ConnectionRefusedError(111, "Connection refused"), NetFailure.REFUSED),
        (OSError(113, "No route to host"), NetFailure.NO_ROUTE),
        (ConnectionResetError(104, "Connection reset by peer"), NetFailure.CLOSED),
        (RuntimeError("something else"), NetFailure.OTHER),
    ],
)
def test_kinds(exc: BaseException, kind: NetFailure) -> None:
    assert failure_kind(exc) is kind


def test_the_registry_client_says_unreachable_in_words() -> None:
    from ecoready.registry.client import RegistryClient

    async def ask() -> str:
        async with RegistryClient() as client:
            try:
                await client.resolve(f"127.0.0.1:{closed_port()}/lib/db:1", "amd64")
            except RegistryError as exc:
                return exc.reason
            return "answered"

    reason = asyncio.run(ask())
    assert reason == "unreachable (connection refused)"


def tls_server(folder: Path) -> tuple[socket.socket, threading.Thread]:
    """A TLS listener on loopback with a certificate of a throwaway CA no one trusts; it
    completes (or fails) one handshake."""
    make_certificates(folder)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "server-cert.pem", folder / "server-key.pem")
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = listener.accept()
        with conn, contextlib.suppress(OSError):
            context.wrap_socket(conn, server_side=True).close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener, thread


def test_a_certificate_not_trusted_says_why_and_how_to_trust_it(tmp_path: Path) -> None:
    listener, thread = tls_server(tmp_path)
    with listener:
        exc = asyncio.run(failure(f"https://127.0.0.1:{listener.getsockname()[1]}/v2/"))
    thread.join(5)
    assert failure_kind(exc) is NetFailure.UNTRUSTED
    words = network_words(exc)
    assert words.startswith("its TLS certificate is not trusted here (unable to get local issuer certificate)")
    assert words.endswith(TRUST_FIX) and "SSL_CERT_FILE" in TRUST_FIX
    # a refused certificate is no unreachable server
    assert unreachable(exc, "https://r/v2/") == f"https://r/v2/: {words}" and unreachable(exc) == words


def test_an_unreachable_server_is_said_with_its_url() -> None:
    exc = asyncio.run(failure(f"http://127.0.0.1:{closed_port()}/v2/"))
    assert unreachable(exc, "http://r/v2/") == "unreachable (connection refused) for http://r/v2/"
    assert unreachable(exc) == "unreachable (connection refused)"


def test_a_certificate_for_another_name_says_so_not_to_trust_a_ca(tmp_path: Path) -> None:
    listener, thread = tls_server(tmp_path)  # its certificate is for 127.0.0.1 only
    context = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))  # its CA trusted
    with (
        listener,
        socket.create_connection(listener.getsockname(), timeout=5) as raw,
        pytest.raises(ssl.SSLCertVerificationError) as refused,
    ):
        context.wrap_socket(raw, server_hostname="localhost")
    thread.join(5)
    words = network_words(refused.value)
    assert words == (
        "its TLS certificate is not trusted here (Hostname mismatch, certificate is not valid for 'localhost'): "
        "ask it by a name its certificate holds"
    )
