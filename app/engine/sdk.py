"""The docker SDK's clients for one engine, and every call made through them: on a bounded
pool of daemon threads, under a deadline, with the SDK's errors turned into ecoready's.

Two clients per engine: `control` with a short socket timeout for control calls, and
`streams` without one for long execs, log reads, pulls and builds (their deadline is
asyncio's). Pings have a client and threads of their own.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import docker
import docker.constants
import docker.errors
import docker.tls
import requests.exceptions
import urllib3.exceptions

from ecoready.domain.errors import DeadlineExceeded, DockerUnavailable, EngineError, EnvironmentProblem
from ecoready.domain.model import TlsFiles
from ecoready.engine.discovery import EngineAddress, find_engine, kind_of_url
from ecoready.engine.threads import DaemonThreadPool

T = TypeVar("T")

NATIVE_WINDOWS = (
    "on native Windows ecoready checks registries only (images, drivers, validate, report, plan, diff); "
    "to run cells, run ecoready inside WSL2 with Docker Desktop's WSL integration turned on (docs/engines.md)"
)
CONNECT_TIMEOUT = 8.0
CONTROL_TIMEOUT = 30.0
# ssh:// hosts: sshd allows 10 sessions per connection by default (MaxSessions), and every
# call in flight holds one; fewer worker threads keep each SDK client under that.
SSH_WORKERS = 8


class Sdk:
    """The SDK clients of one engine. Create with `await Sdk.connect(...)`."""

    def __init__(
        self,
        name: str,
        url: str,
        control: docker.DockerClient,
        streams: docker.DockerClient,
        pool: DaemonThreadPool,
        tls: TlsFiles | None = None,
    ) -> None:
        self.name = name
        self.url = url
        self.tls = tls
        self.control = control
        self.streams = streams
        self._pool = pool
        # pings get threads of their own: whether the engine answers must not wait behind
        # calls stuck in it (that is when the answer matters)
        self._ping_pool = DaemonThreadPool(2, f"docker-{name}-ping")
        self._ping_client: docker.DockerClient | None = None

    @classmethod
    async def connect(
        cls,
        name: str,
        url: str,
        *,
        tls: TlsFiles | None,
        max_workers: int,
        timeout: float,
        prepare: Callable[[docker.DockerClient, EngineAddress], T],
    ) -> tuple[Sdk, T]:
        """Connect or raise EnvironmentProblem within `timeout` seconds, on every transport:
        docker-py's ssh transport (paramiko) has no connect timeout of its own, so the
        attempt runs on a daemon thread under asyncio's deadline and is abandoned after it.
        No `url`: the engine the docker CLI would use (engine/discovery.py). `prepare` runs
        on that thread once the engine answered, within the same deadline."""
        if sys.platform == "win32":
            raise EnvironmentProblem(NATIVE_WINDOWS)
        address = find_engine() if not url else EngineAddress(url, "the matrix's [[hosts]]", kind_of_url(url))
        url, tls = address.url, tls or address.tls
        if url.startswith("ssh://"):
            max_workers = min(max_workers, SSH_WORKERS)
        pool = DaemonThreadPool(max_workers, f"docker-{name}")

        def make() -> tuple[docker.DockerClient, docker.DockerClient, T]:
            control = _client(url, CONTROL_TIMEOUT, tls)
            control.ping()
            prepared = prepare(control, address)
            return control, _client(url, None, tls), prepared

        loop = asyncio.get_running_loop()
        try:
            _check_tls_files(tls)
            async with asyncio.timeout(timeout):
                control, streams, prepared = await loop.run_in_executor(pool, make)
        except TimeoutError:
            pool.shutdown(wait=False)
            raise EnvironmentProblem(
                f"the engine at {address.said()} did not answer within {timeout:.0f} s; {address.kind.start}"
            ) from None
        except EnvironmentProblem:
            pool.shutdown(wait=False)
            raise
        except Exception as exc:
            pool.shutdown(wait=False)
            reason = _connect_reason(exc)
            raise EnvironmentProblem(
                f"the engine at {address.said()} is unreachable: {reason[:200]}; {_fix(address)}"
            ) from None
        return cls(name, url, control, streams, pool, tls), prepared

    async def close(self, timeout: float = 5.0) -> None:
        """Close the SDK clients (best effort, bounded: closing an ssh:// connection to a
        host that vanished can block) and let the worker threads go."""

        def close_all() -> None:
            for client in (self.control, self.streams, self._ping_client):
                if client is None:
                    continue
                try:
                    client.close()
                except Exception:  # noqa: S110 - closing is best effort
                    pass

        try:
            async with asyncio.timeout(timeout):
                await asyncio.get_running_loop().run_in_executor(self._pool, close_all)
        except (TimeoutError, RuntimeError):
            pass
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._ping_pool.shutdown(wait=False, cancel_futures=True)

    def submit(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        """Start `fn` on the pool; await it with `wait` (its deadline, its errors)."""
        return asyncio.get_running_loop().run_in_executor(self._pool, fn)

    async def call(self, fn: Callable[[], T], timeout: float | None = CONTROL_TIMEOUT + 5, what: str = "") -> T:
        """`fn` (SDK calls) on the pool under `timeout`; DeadlineExceeded after it, naming
        `what` was done (the step and its image) and the engine."""
        return await self.wait(self.submit(fn), timeout, what)

    async def wait(self, future: asyncio.Future[T], timeout: float | None, what: str = "") -> T:
        doing = what or "a docker call"
        try:
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            raise DeadlineExceeded(
                f"{doing} did not finish within {timeout:.0f} s on the engine at {self.url}"
            ) from None
        except (requests.exceptions.Timeout, urllib3.exceptions.TimeoutError) as exc:
            # the control client's socket timeout: the engine is too busy to answer a call
            # meant to be short (a long one goes through `streams`, bounded by its deadline)
            raise DeadlineExceeded(
                f"{doing}: the engine at {self.url} sent nothing for {CONTROL_TIMEOUT:.0f} s "
                f"({type(exc).__name__}): it is busy or stuck"
            ) from None
        except docker.errors.APIError as exc:
            if _unavailable(exc):
                raise DockerUnavailable("docker daemon unavailable") from None
            said = _explain(exc)
            raise EngineError(f"{what}: {said}" if what else said) from None
        except (
            requests.exceptions.RequestException,
            urllib3.exceptions.HTTPError,
            docker.errors.DockerException,
            OSError,
        ) as exc:
            if _unavailable(exc):
                raise DockerUnavailable("docker daemon unavailable") from None
            raise EngineError(
                f"{doing}: talking to the engine at {self.url} failed ({type(exc).__name__}: {_plain(exc)})"
            ) from None

    async def ping(self, timeout: float = 5.0) -> bool:
        """Whether the engine answers a new connection now. Not over a kept-alive one: a
        dockerd shutting down has closed its socket but still answers on open connections
        while it stops its containers (seconds), and it is gone for everything else."""

        def fresh_ping() -> bool:
            if self._ping_client is None:
                self._ping_client = _client(self.url, CONTROL_TIMEOUT, self.tls)
            else:
                self._ping_client.api.close()  # drop pooled connections: the next one is new
            return bool(self._ping_client.ping())

        if self.url.startswith("ssh://"):  # a new ssh connection: handshake and authentication too
            timeout = max(timeout, CONNECT_TIMEOUT)
        try:
            future: asyncio.Future[bool] = asyncio.get_running_loop().run_in_executor(self._ping_pool, fresh_ping)
            answered: bool = await self.wait(future, timeout)
        except Exception:
            return False
        return answered


def _fix(address: EngineAddress) -> str:
    """How to get the engine found at `address` to answer, in its own terms; with the
    sockets looked for when none was found."""
    if address.tried and address.kind.key == "docker":
        return (
            f"{address.kind.start}; no other engine's socket was found either ({', '.join(address.tried)}): "
            "set DOCKER_HOST or `docker context use NAME` to the engine you run"
        )
    return address.kind.start


def _unavailable(exc: BaseException) -> bool:
    if isinstance(exc, (requests.exceptions.ConnectionError, ConnectionError, FileNotFoundError, EOFError)):
        return True
    if type(exc).__module__.split(".")[0] == "paramiko":  # ssh:// transport: channel or session refused
        return True
    if isinstance(exc, urllib3.exceptions.ProtocolError):  # a stream cut off: the engine went away
        return True
    text = str(exc)
    return (
        "Connection aborted" in text or "Connection broken" in text or "Error while fetching server API version" in text
    )


def _client(url: str, timeout: float | None, tls: TlsFiles | None = None) -> docker.DockerClient:
    kwargs: dict[str, Any] = {"version": "auto"}
    if timeout is not None:
        kwargs["timeout"] = timeout
    else:
        kwargs["timeout"] = 24 * 3600  # no socket timeout for long streams: asyncio bounds them
    if url.startswith("ssh://"):
        # paramiko rather than the ssh binary: one connection per client, host keys checked
        # against ~/.ssh/known_hosts (unknown keys refused), ~/.ssh/config honoured
        return docker.DockerClient(base_url=url, use_ssh_client=False, max_pool_size=SSH_WORKERS, **kwargs)
    if tls is not None:
        config = docker.tls.TLSConfig(client_cert=(tls.cert, tls.key), ca_cert=tls.ca, verify=True)
        # requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE replace the host's own CA when a
        # request does not name one (psf/requests#3829), and version="auto" asks the engine
        # inside the constructor: start from a fixed version, stop trusting the environment,
        # then negotiate as "auto" would
        fixed = {**kwargs, "version": docker.constants.DEFAULT_DOCKER_API_VERSION}
        client = docker.DockerClient(base_url=url, tls=config, **fixed)
        client.api.trust_env = False
        setattr(client.api, "_version", str(client.api.version(api_version=False)["ApiVersion"]))  # noqa: B010
        return client
    return docker.DockerClient(base_url=url, **kwargs)


# What matters in the SDK's nested connection errors ("Error while fetching server API
# version: HTTPSConnectionPool(...): Max retries exceeded ... (Caused by SSLError(...")
_REASONS = (
    "[SSL",
    "Connection refused",
    "No such file or directory",
    "Permission denied",
    "Name or service not known",
    "timed out",
    "not found in known_hosts",
    "Authentication failed",
    "Unable to connect",
)


def _connect_reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    for marker in _REASONS:
        at = text.find(marker)
        if at >= 0:
            return text[at : at + 160].rstrip("')\" ")
    return text[:200]


def _check_tls_files(tls: TlsFiles | None) -> None:
    if tls is None:
        return
    for what, path in (("CA certificate", tls.ca), ("client certificate", tls.cert), ("client key", tls.key)):
        if not os.path.isfile(path):
            raise EnvironmentProblem(f"TLS {what} {path} does not exist (see [[hosts]] tls_* in docs/matrix.md)")


# what the HTTP client puts around a reason: the pool, the URL (the engine's socket as
# `http+docker://localhost/...`): said as "the engine", never shown
_TRANSPORT = re.compile(
    r"(?:Unix)?HTTP(?:S)?ConnectionPool\([^)]*\):\s*|for (?:url: )?http\+docker://\S+|http\+docker://\S+",
)


def _plain(exc: BaseException) -> str:
    """An exception's reason without the transport's words, one line, bounded."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return _TRANSPORT.sub("", text).strip(" :")[:200] or type(exc).__name__


def _explain(exc: docker.errors.APIError) -> str:
    """What the engine said when it refused; its HTTP status when it said nothing."""
    explanation = str(getattr(exc, "explanation", "") or "").strip()
    if explanation and not _TRANSPORT.search(explanation):
        return explanation.splitlines()[0][:300]
    status = getattr(exc, "status_code", None)
    return f"the engine answered HTTP {status} and said nothing more" if status else _plain(exc)
