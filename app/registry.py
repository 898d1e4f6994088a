"""Is an image published for an arch? Asked of the registry itself (OCI distribution API),
without pulling: HEAD first, GET only for bodies we need, one request per URL per run.

Auth follows the registry's `WWW-Authenticate` challenge (Bearer realm/service/scope with
an anonymous or credentialled token; Basic), so Docker Hub, ghcr.io, quay.io, Oracle's
registry and private ones work alike. Credentials are never printed.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import httpx

from app.errors import InfraError
from app.model import normalize_arch

INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
MANIFEST_TYPES = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
ACCEPT = ", ".join(INDEX_TYPES + MANIFEST_TYPES)
DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"
DEFAULT_TIMEOUT = httpx.Timeout(connect=5.0, read=20.0, write=10.0, pool=5.0)
SUFFIXES = {"arm64": ("aarch64", "arm64"), "amd64": ("amd64", "x86_64")}


class RegistryError(InfraError):
    """The registry could not be asked (network, auth, rate limit): the cell is `error`."""


@dataclass(frozen=True)
class ImageRef:
    registry: str  # as written: docker.io, ghcr.io, 127.0.0.1:5000
    repository: str  # library/mysql
    tag: str | None = None
    digest: str | None = None

    @property
    def api_host(self) -> str:
        return DOCKER_HUB_API if self.registry == DOCKER_HUB else self.registry

    @property
    def reference(self) -> str:
        """The tag or digest to ask the manifests endpoint for."""
        return self.digest or self.tag or "latest"

    def with_tag(self, tag: str) -> ImageRef:
        return replace(self, tag=tag, digest=None)

    def pull_name(self, digest: str) -> str:
        return f"{self.registry}/{self.repository}@{digest}"

    def __str__(self) -> str:
        base = f"{self.registry}/{self.repository}"
        if self.tag:
            base += f":{self.tag}"
        if self.digest:
            base += f"@{self.digest}"
        return base


def parse_reference(text: str) -> ImageRef:
    """Docker's normalisation: `mysql:8.4` -> docker.io/library/mysql:8.4."""
    name, _, digest = text.strip().partition("@")
    tag = None
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name, tag = name[:colon], name[colon + 1 :]
    first, _, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, repository = first, rest
    else:
        registry, repository = DOCKER_HUB, name
    if registry in ("index.docker.io", "registry-1.docker.io"):
        registry = DOCKER_HUB
    if registry == DOCKER_HUB and "/" not in repository:
        repository = f"library/{repository}"
    if not tag and not digest:
        tag = "latest"
    return ImageRef(registry, repository, tag, digest or None)


def mirror_reference(ref: ImageRef, mirror: str | None) -> ImageRef:
    """`[registry] mirror = "host:port[/prefix]"`: every reference is asked of the mirror,
    keeping its repository path (docker.io's library/ included)."""
    if not mirror:
        return ref
    host, _, prefix = mirror.strip().rstrip("/").partition("/")
    repository = f"{prefix}/{ref.repository}" if prefix else ref.repository
    return replace(ref, registry=host, repository=repository)


@dataclass(frozen=True)
class Availability:
    reference: str
    arch: str
    status: str  # available | missing | mislabelled
    digest: str = ""  # per-arch manifest digest
    index_digest: str = ""
    size: int | None = None
    found_as: str = ""
    detail: str = ""
    arches: tuple[str, ...] = ()
    pull_reference: str = ""


@dataclass
class RateLimit:
    limit: str = ""
    remaining: str = ""
    source: str = ""


@dataclass
class _Response:
    status: int
    headers: Mapping[str, str]
    body: bytes


class RegistryClient:
    """One per run: caches every response and token; safe for concurrent use."""

    def __init__(
        self,
        *,
        mirror: str | None = None,
        insecure: tuple[str, ...] = (),
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        credentials: Callable[[str], tuple[str, str] | None] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.mirror = mirror
        self.insecure = insecure
        self.timeout = timeout
        self.credentials = credentials
        self.transport = transport
        self.requests = 0  # HTTP requests made, tokens included (bench/registry.py reads it)
        self.rate_limits: dict[str, RateLimit] = {}
        self._client: httpx.AsyncClient | None = None
        self._cache: dict[tuple[str, str, str], asyncio.Future[_Response]] = {}
        self._tokens: dict[tuple[str, str, str], str] = {}

    async def __aenter__(self) -> RegistryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self.timeout,
                transport=self.transport,
                follow_redirects=True,
                trust_env=False,
                headers={"User-Agent": "ecoready"},
            )
        return self._client

    def _scheme(self, host: str) -> str:
        bare = host.split(":")[0]
        if host in self.insecure or bare in ("localhost", "127.0.0.1", "::1") or bare.startswith("127."):
            return "http"
        return "https"

    # -- HTTP with auth -------------------------------------------------------------
    async def _get(self, ref: ImageRef, path: str, *, method: str = "GET", accept: str = ACCEPT) -> _Response:
        key = (method, ref.api_host, f"{ref.repository}/{path}")
        future = self._cache.get(key)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._cache[key] = future
            try:
                future.set_result(await self._fetch(ref, path, method, accept))
            except BaseException as exc:
                future.set_exception(exc)
                future.exception()  # retrieved: the next caller re-raises it
        return await future

    async def _fetch(self, ref: ImageRef, path: str, method: str, accept: str) -> _Response:
        url = f"{self._scheme(ref.api_host)}://{ref.api_host}/v2/{ref.repository}/{path}"
        headers = {"Accept": accept}
        scope = f"repository:{ref.repository}:pull"
        auth = self._tokens.get((ref.api_host, scope, "")) or self._tokens.get((ref.api_host, "", "basic"))
        if auth:
            headers["Authorization"] = auth
        response = await self._send(method, url, headers, ref.api_host)
        if response.status_code == 401:
            headers["Authorization"] = await self._authorize(ref, response.headers.get("www-authenticate", ""), scope)
            response = await self._send(method, url, headers, ref.api_host)
            if response.status_code == 401:
                raise RegistryError(
                    f"{ref.registry}: authentication failed for {ref.repository} "
                    "(check the credentials for this registry)"
                )
        self._note_rate_limit(ref.registry, response.headers)
        if response.status_code == 429:
            raise RegistryError(
                f"{ref.registry}: rate limit reached (HTTP 429); "
                f"remaining {self.rate_limits.get(ref.registry, RateLimit()).remaining or '0'}"
            )
        if response.status_code >= 500:
            raise RegistryError(f"{ref.registry}: server error HTTP {response.status_code}")
        if response.status_code == 403:
            raise RegistryError(f"{ref.registry}: access denied to {ref.repository} (HTTP 403)")
        return _Response(response.status_code, dict(response.headers), response.content)

    async def _send(self, method: str, url: str, headers: Mapping[str, str], registry: str) -> httpx.Response:
        self.requests += 1
        try:
            return await self._http().request(method, url, headers=dict(headers))
        except httpx.TimeoutException:
            raise RegistryError(f"{registry}: no answer in time (timeout)") from None
        except httpx.HTTPError as exc:
            raise RegistryError(f"{registry}: unreachable ({type(exc).__name__}: {_short(exc)})") from None

    async def _authorize(self, ref: ImageRef, challenge: str, scope: str) -> str:
        scheme, params = parse_challenge(challenge)
        creds = self.credentials(ref.registry) if self.credentials else None
        if scheme == "basic":
            if not creds:
                raise RegistryError(f"{ref.registry}: needs a login (Basic auth) and no credentials are configured")
            value = "Basic " + base64.b64encode(f"{creds[0]}:{creds[1]}".encode()).decode()
            self._tokens[(ref.api_host, "", "basic")] = value
            return value
        if scheme != "bearer" or "realm" not in params:
            raise RegistryError(f"{ref.registry}: unsupported authentication challenge {scheme or '(none)'}")
        query = {"service": params.get("service", ""), "scope": params.get("scope", scope)}
        auth = httpx.BasicAuth(*creds) if creds else None
        self.requests += 1
        try:
            response = await self._http().get(params["realm"], params={k: v for k, v in query.items() if v}, auth=auth)
        except httpx.HTTPError as exc:
            raise RegistryError(f"{ref.registry}: token service unreachable ({type(exc).__name__})") from None
        if response.status_code in (401, 403):
            raise RegistryError(
                f"{ref.registry}: token refused (HTTP {response.status_code}); check the credentials for this registry"
            )
        if response.status_code != 200:
            raise RegistryError(f"{ref.registry}: token service answered HTTP {response.status_code}")
        try:
            data = response.json()
            token = data.get("token") or data.get("access_token")
        except ValueError:
            token = None
        if not token:
            raise RegistryError(f"{ref.registry}: token service sent no token")
        value = f"Bearer {token}"
        self._tokens[(ref.api_host, scope, "")] = value
        return value

    def _note_rate_limit(self, registry: str, headers: httpx.Headers) -> None:
        limit = headers.get("ratelimit-limit")
        if limit is not None:
            self.rate_limits[registry] = RateLimit(
                limit, headers.get("ratelimit-remaining", ""), headers.get("docker-ratelimit-source", "")
            )

    # -- manifests ----------------------------------------------------------------------
    async def manifest(self, ref: ImageRef) -> tuple[str, str, dict[str, Any]]:
        """(media type, digest, body) of a manifest or index."""
        response = await self._get(ref, f"manifests/{ref.reference}")
        if response.status == 404:
            raise _NotFound(f"{ref} not found")
        if response.status != 200:
            raise RegistryError(f"{ref.registry}: manifest request answered HTTP {response.status}")
        try:
            body = json.loads(response.body)
        except ValueError:
            raise RegistryError(f"{ref.registry}: manifest of {ref} is not JSON") from None
        media = response.headers.get("content-type", "").split(";")[0].strip() or body.get("mediaType", "")
        digest = response.headers.get("docker-content-digest", "")
        return media, digest, body

    async def config_arch(self, ref: ImageRef, manifest: Mapping[str, Any]) -> str:
        digest = (manifest.get("config") or {}).get("digest", "")
        response = await self._get(ref, f"blobs/{digest}", accept="*/*")
        if response.status != 200:
            raise RegistryError(f"{ref.registry}: config blob {digest[:19]} answered HTTP {response.status}")
        try:
            config = json.loads(response.body)
        except ValueError:
            raise RegistryError(f"{ref.registry}: config blob of {ref} is not JSON") from None
        return normalize_arch(str(config.get("architecture", ""))) or str(config.get("architecture", ""))

    async def resolve(self, reference: str, arch: str) -> Availability:
        """Whether `reference` is published for `arch`, and the per-arch digest to pull."""
        asked = parse_reference(reference)
        ref = mirror_reference(asked, self.mirror)
        try:
            return await self._resolve(ref, reference, arch)
        except _NotFound as exc:
            return Availability(reference, arch, "missing", detail=f"missing: {exc}")

    async def _resolve(self, ref: ImageRef, reference: str, arch: str) -> Availability:
        media, digest, body = await self.manifest(ref)
        if media in INDEX_TYPES or "manifests" in body:
            platforms = index_platforms(body)
            arches = tuple(sorted({a for a, _ in platforms}))
            entry = next((d for a, d in platforms if a == arch), None)
            if entry is None:
                return Availability(
                    reference,
                    arch,
                    "missing",
                    index_digest=digest,
                    detail=f"missing: the index publishes {', '.join(arches) or 'no platforms'}",
                    arches=arches,
                )
            child_ref = replace(ref, digest=entry["digest"], tag=None)
            _, _, child = await self.manifest(child_ref)
            actual = await self.config_arch(ref, child)
            if actual != arch:
                return Availability(
                    reference,
                    arch,
                    "mislabelled",
                    digest=entry["digest"],
                    index_digest=digest,
                    detail=f"mislabelled: the index says {arch}, the image is {actual}",
                    arches=arches,
                )
            return Availability(
                reference,
                arch,
                "available",
                digest=entry["digest"],
                index_digest=digest,
                size=manifest_size(child),
                found_as="index",
                arches=arches,
                pull_reference=ref.pull_name(entry["digest"]),
            )
        actual = await self.config_arch(ref, body)
        if actual != arch:
            return Availability(
                reference,
                arch,
                "missing",
                digest=digest,
                arches=(actual,),
                detail=f"missing: a single-arch image for {actual}",
            )
        return Availability(
            reference,
            arch,
            "available",
            digest=digest,
            size=manifest_size(body),
            found_as="single manifest",
            arches=(actual,),
            pull_reference=ref.pull_name(digest),
        )


class _NotFound(Exception):
    pass


def index_platforms(index: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(arch, entry) of an index's real platforms; attestation (unknown/unknown) skipped."""
    out: list[tuple[str, dict[str, Any]]] = []
    for entry in index.get("manifests") or []:
        platform = entry.get("platform") or {}
        os_name = platform.get("os", "")
        raw = str(platform.get("architecture", ""))
        if os_name == "unknown" or raw == "unknown":
            continue
        annotations = entry.get("annotations") or {}
        if annotations.get("vnd.docker.reference.type") == "attestation-manifest":
            continue
        if os_name and os_name != "linux":
            continue
        arch = normalize_arch(raw) or raw
        if arch == "arm64" and platform.get("variant") not in (None, "", "v8"):
            continue
        if raw == "arm" or arch == "arm":
            continue
        out.append((arch, entry))
    return out


def manifest_size(manifest: Mapping[str, Any]) -> int:
    layers = manifest.get("layers") or []
    config = manifest.get("config") or {}
    return int(sum(int(layer.get("size", 0)) for layer in layers) + int(config.get("size", 0)))


_PARAM = re.compile(r'(\w+)=(?:"([^"]*)"|([^,\s]*))')


def parse_challenge(header: str) -> tuple[str, dict[str, str]]:
    """`Bearer realm="…",service="…",scope="…"` -> ("bearer", {...})."""
    scheme, _, rest = header.strip().partition(" ")
    params = {m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3) for m in _PARAM.finditer(rest)}
    return scheme.lower(), params


def _short(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text[:160]
