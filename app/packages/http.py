"""HTTP for package registries: one client per run, explicit timeouts and a whole-request
deadline, bounded answers, a few requests at once per host, each URL fetched once per run,
http and https only, a 429's `Retry-After` waited for within a budget per registry (as for
container registries), the URL said in every failure, and each registry's status
(requests, last failure) as it changes. A registry that cannot be asked is a
`RegistryError` (infrastructure), never a verdict about the package.

The base URLs are the public registries unless the environment names a mirror:
ECOREADY_PYPI_URL, ECOREADY_NPM_REGISTRY, ECOREADY_MAVEN_REPOSITORY, ECOREADY_GOPROXY
(the installers in containers are pointed at the same ones).
"""

from __future__ import annotations

import asyncio
import os
import ssl
import time
from collections.abc import Callable
from dataclasses import replace
from urllib.parse import urlsplit

import httpx

from ecoready import __version__
from ecoready.domain.errors import RegistryError
from ecoready.domain.flight import Flights
from ecoready.domain.images import RegistryStatus
from ecoready.domain.networds import network_words, unreachable
from ecoready.domain.retry_after import RATE_LIMIT_WAIT, retry_after

TIMEOUT = httpx.Timeout(connect=5.0, read=20.0, write=10.0, pool=10.0)
DEADLINE = 60.0  # one request, however slowly the server trickles its answer
METADATA_LIMIT = 16 << 20  # a package's metadata (npm's documents of busy packages are big)
ARCHIVE_LIMIT = 40 << 20  # an sdist, a jar, a module zip looked into
PER_HOST = 4
RETRY_PAUSE = 0.5

BASES = {
    "pypi": ("ECOREADY_PYPI_URL", "https://pypi.org"),
    "npm": ("ECOREADY_NPM_REGISTRY", "https://registry.npmjs.org"),
    "maven": ("ECOREADY_MAVEN_REPOSITORY", "https://repo1.maven.org/maven2"),
    "go": ("ECOREADY_GOPROXY", "https://proxy.golang.org"),
}


def base_url(registry: str) -> str:
    """The registry's base URL (no trailing slash): the environment's mirror or the public one."""
    variable, default = BASES[registry]
    return (os.environ.get(variable) or default).rstrip("/")


def host_of(url: str) -> str:
    """The registry's name in statuses and errors: the host a URL asks."""
    return urlsplit(url).netloc


def trust() -> ssl.SSLContext:
    """The system's trust store (as pip and npm on this machine use it), or $SSL_CERT_FILE."""
    return ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE") or None)


class PackageHttp:
    """Safe for concurrent use; `aclose()` when done."""

    def __init__(
        self,
        *,
        timeout: httpx.Timeout = TIMEOUT,
        deadline: float = DEADLINE,
        on_status: Callable[[RegistryStatus], None] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        wait_budget: float = RATE_LIMIT_WAIT,
    ) -> None:
        self.timeout = timeout
        self.wait_budget = wait_budget
        self._waited: dict[str, float] = {}  # host -> seconds this run waited for it (429s)
        self._until: dict[str, float] = {}  # host -> monotonic time before which it is not asked
        self.deadline = deadline
        self.on_status = on_status
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._fetches: Flights[tuple[str, str], bytes | None] = Flights(remember=True)  # (url, accept)
        self._status: dict[str, RegistryStatus] = {}

    async def aclose(self) -> None:
        await self._fetches.aclose()
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def statuses(self) -> tuple[RegistryStatus, ...]:
        return tuple(self._status.values())

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self.timeout,
                verify=trust() if self._transport is None else True,
                transport=self._transport,
                follow_redirects=True,  # files live behind CDNs
                max_redirects=5,
                trust_env=False,
                headers={"User-Agent": f"ecoready/{__version__}"},
            )
        return self._client

    def _update(self, host: str, *, count: bool = False, error: str | None = None) -> None:
        """Count a request or note a failure; first contact and changes are reported."""
        old = self._status.get(host) or RegistryStatus(host)
        new = replace(old, requests=old.requests + (1 if count else 0), error=old.error if error is None else error)
        self._status[host] = new
        if self.on_status is not None and (old.requests == 0 or old.error != new.error):
            self.on_status(new)

    async def get(self, url: str, *, accept: str = "", limit: int = METADATA_LIMIT, via: str = "") -> bytes | None:
        """The body of `url`, or None when the registry says it does not exist (404/410).
        Each URL is asked once per run: later callers share the first answer. `via`: the
        document that named `url` (a file's URL from a registry's metadata), named when
        `url` is not one to fetch (only http and https are)."""
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            host = host_of(via) or host_of(url) or "the registry"
            named = f" named by {via}" if via else ""
            raise self._failed(
                host, f"handed out {url}{named}, a {scheme or 'schemeless'} URL: not fetched (only http and https)"
            )
        return await self._fetches.ask((url, accept), lambda: self._fetch(url, accept, limit))

    async def _fetch(self, url: str, accept: str, limit: int) -> bytes | None:
        host = host_of(url)
        slot = self._slots.setdefault(host, asyncio.Semaphore(PER_HOST))
        async with slot:
            attempt = 0
            while True:
                attempt += 1
                await self._held_back(host)
                self._update(host, count=True)
                try:
                    async with asyncio.timeout(self.deadline):
                        status, body, wait = await self._exchange(url, accept, limit, host)
                except TimeoutError:
                    raise self._failed(host, f"no answer within {self.deadline:g} s for {url}") from None
                except httpx.TimeoutException as exc:
                    raise self._failed(host, f"timed out ({network_words(exc)}) for {url}") from None
                except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                    if attempt == 1:
                        continue  # typically a kept-alive connection the server had just closed
                    raise self._failed(host, unreachable(exc, url)) from None
                except httpx.HTTPError as exc:
                    raise self._failed(host, unreachable(exc, url)) from None
                if status in (502, 503, 504) and attempt == 1:
                    await asyncio.sleep(RETRY_PAUSE)
                    continue
                if status in (404, 410):
                    return None
                if status == 429:
                    self._wait_for(host, url, wait)
                    continue
                if status >= 300:
                    raise self._failed(host, f"answered HTTP {status} for {url}")
                if self._status[host].error:
                    self._update(host, error="")
                return body

    async def _held_back(self, host: str) -> None:
        """Wait while the registry asked us to (its Retry-After): no request meanwhile."""
        until = self._until.get(host, 0.0)
        pause = until - time.monotonic()
        if pause > 0:
            await asyncio.sleep(pause)

    def _wait_for(self, host: str, url: str, wait: float | None) -> None:
        """A 429: wait as long as its Retry-After says, unless that takes this run's waits
        for this registry past the budget (then the request fails, saying so)."""
        if wait is None:
            raise self._failed(host, f"rate limit reached (HTTP 429, no Retry-After) for {url}")
        waited = self._waited.get(host, 0.0) + wait
        if waited > self.wait_budget:
            raise self._failed(
                host,
                f"rate limit reached (HTTP 429) for {url}: asked to wait {wait:g} s, "
                f"over the {self.wait_budget:g} s a run waits per registry; try again later",
            )
        self._waited[host] = waited
        self._until[host] = max(self._until.get(host, 0.0), time.monotonic() + wait)

    async def _exchange(self, url: str, accept: str, limit: int, host: str) -> tuple[int, bytes, float | None]:
        """(status, body, the seconds a 429's Retry-After asks for)."""
        client = self._http()
        headers = {"Accept": accept} if accept else {}
        async with client.stream("GET", url, headers=headers) as response:
            if response.status_code >= 300:
                wait = retry_after(response.headers.get("retry-after", "")) if response.status_code == 429 else None
                return response.status_code, b"", wait
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    raise self._failed(host, f"answer larger than {limit >> 20} MiB for {url}")
                chunks.append(chunk)
            return response.status_code, b"".join(chunks), None

    def _failed(self, host: str, reason: str) -> RegistryError:
        self._update(host, error=reason)
        return RegistryError(host, reason)
