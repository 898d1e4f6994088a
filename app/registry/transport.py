"""Talking to registries: one HTTP client for the run, its connections kept alive from
one request to the next (HEADs included) and HTTP/2 where the registry offers it over TLS, a
few requests at once per registry (the first wave of them at once, the rest once the
registry's first answer has said what auth it wants), a whole-request deadline, and the
challenge auth (Bearer tokens, Basic) with credentials from the docker config.
Credentials never appear in a message.

At most PER_REGISTRY requests at once to a registry over HTTP/1.1 (as many connections,
each kept for the next request), PER_REGISTRY_H2 over the one connection of a registry
that answered over HTTP/2; measured in bench/registry.py and docs/performance.md. The
registries' statuses and the manners each asks of us (429 waits within a budget, a spent
rate limit, a registry down, a repository hanging) are `manners.py`'s, asked before each
request and told after.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import json
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import httpx

from ecoready import __version__
from ecoready.domain.errors import CredentialError, LoginRequired, RegistryError
from ecoready.domain.flight import Flights
from ecoready.domain.images import RegistryStatus
from ecoready.domain.networds import unreachable
from ecoready.domain.retry_after import RATE_LIMIT_WAIT, retry_after
from ecoready.registry.credentials import DockerCredentials, Login
from ecoready.registry.early import (
    CONNECT_TIMEOUT,
    PER_REGISTRY,
    PER_REGISTRY_H2,
    EarlyConnections,
    loopback,
    scheme_of,
)
from ecoready.registry.headers import parse_challenge
from ecoready.registry.manifests import ACCEPT, ImageRef
from ecoready.registry.manners import Manners
from ecoready.registry.network import Network, plain_http, tls_transport

# httpx would default every phase to 5 s; registries can be slow to send a big index.
DEFAULT_TIMEOUT = httpx.Timeout(connect=CONNECT_TIMEOUT, read=20.0, write=10.0, pool=10.0)
REQUEST_DEADLINE = 45.0  # one request, however slowly the server trickles its answer
MAX_BODY = 4 << 20  # distribution refuses bigger manifests; a config blob is far smaller
RETRY_PAUSE = 0.5
# Answers asked once more (after RETRY_PAUSE) before they count: a gateway's 502/503/504,
# and a 500, which a registry also gives for a moment (Docker's distribution reading a
# tag's link while a push rewrites it: "invalid checksum digest format"). Only reads are
# sent here, so asking again changes nothing on the registry.
TRANSIENT = (500, 502, 503, 504)
MAX_THROTTLED = 20  # 429s answered with a wait for one request, however short the waits
HEAD_REFUSED = (405, 501)  # answers of a registry that does not do HEAD on manifests

Credentials = Callable[[str], "Login | None"]


@dataclass(frozen=True)
class Reply:
    status: int
    headers: httpx.Headers
    body: bytes
    http_version: str = "HTTP/1.1"


class RegistryTransport:
    """One per run, shared by every lookup: tokens, logins and the registries' states."""

    def __init__(
        self,
        *,
        insecure: tuple[str, ...] = (),
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        deadline: float = REQUEST_DEADLINE,
        credentials: Credentials | None = None,
        on_status: Callable[[RegistryStatus], None] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        wait_budget: float = RATE_LIMIT_WAIT,
        early: EarlyConnections | None = None,
    ) -> None:
        self.insecure = insecure
        self.early = early  # connections opened before the client was made, taken by its pool
        self.timeout = timeout
        self.deadline = deadline
        self.credentials: Credentials = credentials or DockerCredentials()
        self.manners = Manners(wait_budget=wait_budget, on_status=on_status)
        self.transport = transport
        self.requests = 0  # HTTP requests made, tokens included
        self._client: httpx.AsyncClient | None = None
        self._tokens: dict[tuple[str, str], str] = {}
        # (host, scope) -> the token being asked; none kept: `_tokens` is the memo, and drops
        # a token the registry refused so that a fresh one is asked
        self._token_flights: Flights[tuple[str, str], str] = Flights(remember=False)
        self._basic: dict[str, str] = {}
        self._challenges: dict[str, dict[str, str]] = {}  # host -> its Bearer challenge
        self._logins: dict[str, Login | None] = {}
        self._contacts: dict[str, asyncio.Future[None]] = {}  # host -> set once its first answer is in
        self._wave: dict[str, int] = {}  # host -> requests sent before its first answer
        self._slots: dict[str, _Slots] = {}

    async def aclose(self) -> None:
        await self._token_flights.aclose()
        if self.early is not None:
            self.early.close()
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def statuses(self) -> tuple[RegistryStatus, ...]:
        """Every registry asked so far, in order of first contact."""
        return self.manners.statuses()

    # -- HTTP -----------------------------------------------------------------------
    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            limits = httpx.Limits(max_connections=4 * PER_REGISTRY, max_keepalive_connections=2 * PER_REGISTRY)
            self._client = httpx.AsyncClient(
                timeout=self.timeout,
                transport=self.transport or _Transports(limits, self.early),
                follow_redirects=True,  # blobs live behind CDNs; httpx drops Authorization off-origin
                trust_env=False,
                headers={"User-Agent": f"ecoready/{__version__}"},
            )
        return self._client

    def _scheme(self, host: str) -> str:
        return scheme_of(host, self.insecure)

    async def _send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        registry: str,
        host: str,
        params: Mapping[str, str] | None = None,
        repository: str = "",
    ) -> Reply:
        """One exchange under the registry's concurrency limit and a whole-request deadline;
        one retry for a connection the server dropped and for a TRANSIENT status; a 429 that says
        how long to wait is waited for (within the budget) and asked again."""
        slot = self._slots.setdefault(host, _Slots(PER_REGISTRY))
        dropped = retried = False
        async with slot:
            for _ in range(MAX_THROTTLED):
                await self.manners.pause(host)
                self.requests += 1
                self.manners.count(registry)
                exchange = self._exchange(method, url, headers, params, registry)
                try:
                    async with asyncio.timeout(self.deadline):
                        reply = await exchange
                except (TimeoutError, httpx.TimeoutException) as exc:
                    reason = f"no answer in time ({_timeout_kind(exc, self)})"
                    connecting = isinstance(exc, httpx.ConnectTimeout)
                    raise self.manners.no_answer(host, registry, repository, reason, connecting=connecting) from None
                except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                    if not dropped:
                        dropped = True
                        continue  # typically a kept-alive connection the server had just closed
                    raise self.manners.went_down(host, registry, _unreachable(exc)) from None
                except httpx.HTTPError as exc:
                    raise self.manners.went_down(host, registry, _unreachable(exc)) from None
                except httpx.InvalidURL as exc:  # a reference no registry could name
                    raise RegistryError(registry, f"cannot be asked: not a usable address ({_short(exc)})") from None
                self.manners.answered(host)
                if reply.http_version == "HTTP/2":
                    slot.widen(PER_REGISTRY_H2)  # streams of the one connection, not connections
                if reply.status in TRANSIENT and not retried:
                    retried = True
                    await asyncio.sleep(RETRY_PAUSE)
                    continue
                wait = retry_after(reply.headers.get("retry-after", "")) if reply.status == 429 else None
                if wait is None:
                    return reply
                self.manners.postpone(host, registry, wait)
            raise RegistryError(registry, f"rate limited (HTTP 429): still refused after {MAX_THROTTLED} waits")

    async def _exchange(
        self, method: str, url: str, headers: Mapping[str, str], params: Mapping[str, str] | None, registry: str
    ) -> Reply:
        client = self._http()
        request = client.build_request(method, url, headers=dict(headers), params=params)
        response = await client.send(request, stream=True)
        try:
            chunks: list[bytes] = []
            size = 0
            # read to the end even for a HEAD (no bytes): a response closed before its end
            # takes its connection with it, and the next request would open another
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_BODY:
                    raise RegistryError(registry, f"answer larger than {MAX_BODY >> 20} MiB for {url}")
                chunks.append(chunk)
            return Reply(response.status_code, response.headers, b"".join(chunks), response.http_version)
        finally:
            await response.aclose()

    async def _first_wave(self, host: str) -> bool:
        """True for a request sent before `host` has answered: the first PER_REGISTRY go at
        once (a round trip sooner than one alone, on a registry that wants no auth or whose
        401 each of them answers with a token); the rest wait for its first answer, so they
        know its auth challenge and its rate limit before they are sent. On a registry that
        wants auth, at most that first wave is refused once with 401."""
        gate = self._contacts.get(host)
        if gate is None:
            gate = self._contacts[host] = asyncio.get_running_loop().create_future()
        if gate.done():
            return False
        sent = self._wave.get(host, 0)
        if sent < PER_REGISTRY:
            self._wave[host] = sent + 1
            return True
        await asyncio.shield(gate)
        return False

    def _answered(self, host: str) -> None:
        """The registry's first answer is in (and its challenge learned): the rest may go."""
        gate = self._contacts.get(host)
        if gate is not None and not gate.done():
            gate.set_result(None)

    # -- requests with auth -----------------------------------------------------------
    async def request(self, ref: ImageRef, method: str, path: str, accept: str = ACCEPT) -> Reply:
        """A request to the registry's API for `ref`'s repository, authenticated as its
        challenge asks; 404 (and 405/501 to a HEAD) is returned, every other failure raised
        as RegistryError."""
        host, registry = ref.api_host, ref.registry
        url = f"{self._scheme(host)}://{host}/v2/{ref.repository}/{path}"
        scope = f"repository:{ref.repository}:pull"
        first = await self._first_wave(host)
        repository = ref.repository
        try:
            self.manners.fail_fast(host, registry, repository)
            self.manners.spare_the_limit(registry, method, path)
            headers = {"Accept": accept}
            sent = await self._known_auth(ref, scope)
            if sent:
                headers["Authorization"] = sent
            reply = await self._send(method, url, headers, registry, host, repository=repository)
            if reply.status == 401:
                challenge = reply.headers.get("www-authenticate", "")
                headers["Authorization"] = await self._authorize(ref, challenge, scope, rejected=sent)
                self._answered(host)  # with what it wants learned: Basic, or a Bearer challenge
                reply = await self._send(method, url, headers, registry, host, repository=repository)
                if reply.status == 401:
                    raise self._denied(ref)
            if reply.status == 403 and await self._login(registry) is None:  # denied to an anonymous asker
                raise LoginRequired(registry, f"access to {ref.repository} denied (HTTP 403) to an anonymous pull")
            self.manners.note_rate_limit(registry, reply.headers)
            self._answered(host)
            if method == "HEAD" and reply.status in HEAD_REFUSED:
                return reply  # the caller asks again with GET
            _check_status(reply, ref)
            return reply
        except RegistryError as exc:
            self.manners.update(exc.registry, error=exc.reason)
            raise
        finally:
            if first:
                self._answered(host)  # failed: the rest go (and fail fast if it is down)

    async def _known_auth(self, ref: ImageRef, scope: str) -> str | None:
        host = ref.api_host
        if host in self._basic:
            return self._basic[host]
        if (host, scope) in self._tokens:
            return self._tokens[(host, scope)]
        challenge = self._challenges.get(host)
        if challenge is not None:  # the registry wants tokens: get this scope's before asking
            return await self._token(ref, challenge, scope)
        return None

    async def _login(self, registry: str) -> Login | None:
        if registry not in self._logins:
            try:
                self._logins[registry] = await asyncio.to_thread(self.credentials, registry)
            except CredentialError as exc:
                raise RegistryError(registry, str(exc)) from None
        return self._logins[registry]

    async def _authorize(self, ref: ImageRef, header: str, scope: str, *, rejected: str | None) -> str:
        scheme, params = parse_challenge(header)
        registry, host = ref.registry, ref.api_host
        if scheme == "basic":
            login = await self._login(registry)
            if login is None:
                raise LoginRequired(registry, "asks for a login (Basic auth) and no credentials are configured for it")
            value = "Basic " + base64.b64encode(f"{login.username}:{login.secret}".encode()).decode()
            if value == rejected:
                raise self._denied(ref)
            self._basic[host] = value
            return value
        if scheme != "bearer" or not params.get("realm"):
            raise RegistryError(registry, f"unsupported authentication challenge {scheme or '(none)'}")
        # kept to ask other repositories' tokens up front; its scope was this request's
        self._challenges[host] = {k: v for k, v in params.items() if k not in ("scope", "error")}
        if rejected is not None and self._tokens.get((host, scope)) == rejected:
            del self._tokens[(host, scope)]  # expired (or too narrow): ask for a fresh one
        return await self._token(ref, params, scope)

    async def _token(self, ref: ImageRef, challenge: Mapping[str, str], scope: str) -> str:
        key = (ref.api_host, scope)
        if key in self._tokens:
            return self._tokens[key]
        return await self._token_flights.ask(key, lambda: self._fetch_token(ref, challenge, scope))

    async def _fetch_token(self, ref: ImageRef, challenge: Mapping[str, str], scope: str) -> str:
        registry = ref.registry
        realm = httpx.URL(challenge["realm"])
        login = await self._login(registry)
        headers = {"Accept": "application/json"}
        if login is not None:
            if realm.scheme != "https" and self._scheme(ref.api_host) == "https" and not loopback(realm.host):
                raise RegistryError(registry, f"refusing to send credentials over plain HTTP to {realm.host}")
            headers["Authorization"] = "Basic " + base64.b64encode(f"{login.username}:{login.secret}".encode()).decode()
        params = {"service": challenge.get("service", ""), "scope": challenge.get("scope") or scope}
        url = realm.copy_merge_params({k: v for k, v in params.items() if v})  # keeps the realm's own query
        reply = await self._send("GET", str(url), headers, registry, realm.netloc.decode("ascii"))
        if reply.status in (401, 403):
            if login is None:  # it wants a login: the user's to give, not the tool's trouble
                raise LoginRequired(
                    registry, f"token refused by {realm.host} (HTTP {reply.status}) to an anonymous pull"
                )
            who = f"the credentials for {registry} were not accepted"
            raise RegistryError(registry, f"token refused by {realm.host} (HTTP {reply.status}): {who}")
        if reply.status != 200:
            raise RegistryError(registry, f"token service {realm.host} answered HTTP {reply.status}")
        try:
            data = json.loads(reply.body)
            token = data.get("token") or data.get("access_token")
        except (ValueError, AttributeError):
            token = None
        if not token or not isinstance(token, str):
            raise RegistryError(registry, f"token service {realm.host} sent no token")
        value = f"Bearer {token}"
        self._tokens[(ref.api_host, scope)] = value
        return value

    def _denied(self, ref: ImageRef) -> RegistryError:
        """A 401 that stays: credentials not accepted (the tool's `registry` trouble, said with
        the registry), or none configured (`LoginRequired`: the user has a login to give)."""
        if self._logins.get(ref.registry) is not None:
            return RegistryError(
                ref.registry, f"the credentials for {ref.registry} were not accepted for {ref.repository} (HTTP 401)"
            )
        return LoginRequired(
            ref.registry,
            f"access to {ref.repository} refused (HTTP 401): it needs a login and none is configured for "
            f"{ref.registry} (or it does not exist: a registry answers both the same)",
        )


class _Slots:
    """A semaphore whose size can grow (when a registry turns out to speak HTTP/2)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.busy = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    def widen(self, size: int) -> None:
        self.size = max(self.size, size)
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.busy < self.size:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.busy += 1
                waiter.set_result(None)

    async def __aenter__(self) -> None:
        if self.busy < self.size and not self._waiters:
            self.busy += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed a slot as it was cancelled
                self.busy -= 1
                self._wake()
            raise

    async def __aexit__(self, *exc: object) -> None:
        self.busy -= 1
        self._wake()


class _Transports(httpx.AsyncBaseTransport):
    """Plain HTTP and HTTPS in separate pools. The HTTPS one, with the system's trust store
    (as docker uses), is made when a registry is first asked over HTTPS: loading a trust
    store costs more than a whole answer of a local registry. HTTPS offers HTTP/2 (ALPN),
    which lets every request to a registry share one connection; plain HTTP stays
    HTTP/1.1 (HTTP/2 without TLS needs the server's prior agreement), over the sockets of
    `network.py`."""

    def __init__(self, limits: httpx.Limits, early: EarlyConnections | None = None) -> None:
        self.limits = limits
        self.early = early
        self._plain: httpx.AsyncHTTPTransport | None = None
        self._tls: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme == "https":
            if self._tls is None:
                self._tls = tls_transport(ssl.create_default_context(), self.limits, Network(self.early))
            return await self._tls.handle_async_request(request)
        if self._plain is None:
            self._plain = plain_http(self.limits, Network(self.early))
        return await self._plain.handle_async_request(request)

    async def aclose(self) -> None:
        for transport in (self._plain, self._tls):
            if transport is not None:
                await transport.aclose()


def _check_status(reply: Reply, ref: ImageRef) -> None:
    status = reply.status
    if status < 300 or status == 404:
        return
    if status == 429:
        raise RegistryError(ref.registry, "rate limit reached (HTTP 429)")
    if status == 403:
        raise RegistryError(ref.registry, f"access to {ref.repository} denied (HTTP 403)")
    if status >= 500:
        raise RegistryError(ref.registry, f"server error (HTTP {status})")
    raise RegistryError(ref.registry, f"answered HTTP {status} for {ref}")


def _timeout_kind(exc: BaseException, client: RegistryTransport) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return f"connect timeout, {client.timeout.connect:g} s"
    if isinstance(exc, httpx.ReadTimeout):
        return f"read timeout, {client.timeout.read:g} s"
    if isinstance(exc, httpx.PoolTimeout):
        return f"pool timeout, {client.timeout.pool:g} s"
    if isinstance(exc, httpx.WriteTimeout):
        return f"write timeout, {client.timeout.write:g} s"
    return f"over {client.deadline:g} s"


def _unreachable(exc: Exception) -> str:
    """`unreachable (connection refused)`, or a refused certificate's reason and how to trust
    it: in a user's words, never the exception's class."""
    return unreachable(exc)


def _short(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text[:160]
