"""Is an image published for an arch? Asked of the registry itself (OCI distribution API),
without pulling.

Polite by construction: a tag is asked once per run, with HEAD when its body is probably on
disk already (HEAD does not count against Docker Hub's pull limit) and GET otherwise;
a registry that refuses HEAD on manifests (405/501, or a 404 that a GET of the same tag
contradicts) is asked with GET from then on, for the rest of the run and in later runs
(the disk cache remembers it);
manifests and config blobs are content-addressed, so each digest is fetched at most once
per run whatever repository names it, and kept on disk (`regcache`) for later runs. At most
a few requests at once go to one registry; the first one goes alone, so the others learn
its auth challenge instead of all being refused; a registry that failed is not asked again
for a while.

Auth follows the registry's `WWW-Authenticate` challenge (Bearer realm/service/scope with an
anonymous or credentialled token; Basic), so Docker Hub, ghcr.io, quay.io, Oracle's
registry and private ones go through the same code. Credentials come from the docker
config (`credentials.py`) and never appear in a message.

Verdicts: an index's entry for the arch is verified against the child image's config
(`mislabelled` when they disagree); attestation entries are skipped; when the arch is not
published, the arch-suffixed tags vendors use (`TAG-aarch64`, `TAG-arm64`, `TAG-amd64`)
are tried. A tag not found says whether the repository exists and how many tags it has
(`tags/list`). Anything that stops the registry from answering is a `RegistryError`
(infrastructure: the cell is `error`), never `missing`.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import httpx

from ecoready.domain.errors import MirrorGap, RegistryError
from ecoready.domain.flight import Flights
from ecoready.domain.images import Availability, RegistryStatus, Verdict
from ecoready.domain.retry_after import RATE_LIMIT_WAIT
from ecoready.matrix.document import Mirror, RegistrySettings
from ecoready.matrix.mirrors import upstream_name
from ecoready.registry.cache import DiskCache, default_dir, digest_of, matches
from ecoready.registry.early import EarlyConnections
from ecoready.registry.manifests import (
    ACCEPT,
    ImageRef,
    Manifest,
    arch_name,
    index_platforms,
    manifest_size,
    on_mirror,
    parse_reference,
    pick_entry,
)
from ecoready.registry.transport import (
    DEFAULT_TIMEOUT,
    HEAD_REFUSED,
    REQUEST_DEADLINE,
    Credentials,
    RegistryTransport,
    Reply,
)

TAGS_PAGE = 1000  # tags asked per page of tags/list
MAX_TAG_PAGES = 10  # pages followed at most (Docker Hub's busiest repositories have thousands); a count stops there
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}\Z")  # the distribution spec's tag grammar

# The tags vendors publish per arch when their index lacks it, in the order tried.
SUFFIXES: Mapping[str, tuple[str, ...]] = {"arm64": ("aarch64", "arm64"), "amd64": ("amd64", "x86_64")}
_DIGEST = re.compile(r"^sha(256|512):[0-9a-f]{64,128}\Z")
ANSWERS, REFUSES = "answers", "refuses"  # a registry's manners with HEAD on manifests


class _Absent(Exception):
    """404 for a digest: not an error of the registry, and not worth remembering."""


class RegistryClient:
    """One per run: caches every answer and token; safe for concurrent use."""

    def __init__(
        self,
        *,
        mirrors: tuple[Mirror, ...] = (),
        fallback: bool = False,
        insecure: tuple[str, ...] = (),
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        deadline: float = REQUEST_DEADLINE,
        credentials: Credentials | None = None,
        cache: DiskCache | bool | None = True,
        on_status: Callable[[RegistryStatus], None] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        wait_budget: float = RATE_LIMIT_WAIT,
        early: EarlyConnections | None = None,
    ) -> None:
        self.mirrors = {m.upstream: m for m in mirrors}
        self.fallback = fallback
        self.cache: DiskCache | None = DiskCache(default_dir()) if cache is True else (cache or None)
        self.http = RegistryTransport(
            insecure=insecure,
            timeout=timeout,
            deadline=deadline,
            credentials=credentials,
            on_status=on_status,
            transport=transport,
            wait_budget=wait_budget,
            early=early,
        )
        # each asked once per run, its answer kept (failures are not: asked again)
        self._tags: Flights[tuple[str, str, str], Manifest | None] = Flights(remember=True)
        self._bodies: Flights[str, bytes] = Flights(remember=True)  # by digest
        self._tag_lists: Flights[tuple[str, str], tuple[str, ...] | None] = Flights(remember=True)
        self._head: dict[str, str] = {}  # host -> ANSWERS / REFUSES, this run
        self._a_tag: dict[str, ImageRef] = {}  # host -> a tag it has, to try HEAD on
        self._calibrations: Flights[str, str] = Flights(remember=True)  # host -> ANSWERS / REFUSES

    @classmethod
    def for_settings(cls, settings: RegistrySettings, **more: Any) -> RegistryClient:
        """A client with a matrix's `[registry]` settings (mirrors, fallback, insecure, waits)."""
        return cls(
            mirrors=settings.mirrors,
            fallback=settings.fallback,
            insecure=settings.insecure,
            wait_budget=settings.rate_limit_wait,
            **more,
        )

    def mirror_for(self, registry: str) -> Mirror | None:
        """The mirror asked for `registry`'s images: its own, else the mirror of every registry."""
        return self.mirrors.get(upstream_name(registry)) or self.mirrors.get("*")

    async def __aenter__(self) -> RegistryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for flights in (self._tags, self._bodies, self._tag_lists, self._calibrations):
            await flights.aclose()
        await self.http.aclose()

    def statuses(self) -> tuple[RegistryStatus, ...]:
        """Every registry asked so far, in order of first contact."""
        return self.http.statuses()

    # -- manifests and blobs ----------------------------------------------------------
    async def lookup(self, ref: ImageRef, *, probe: bool = False) -> Manifest | None:
        """The manifest or index `ref` names; None when the registry has no such tag or
        digest. `probe`: the tag may well not exist (HEAD before any GET)."""
        if ref.digest:
            try:
                return _parse_manifest(ref, "", ref.digest, await self._body(ref, "manifests", ref.digest))
            except _Absent:
                return None
        key = (ref.api_host, ref.repository, ref.tag or "latest")
        return await self._tags.ask(key, lambda: self._lookup_tag(ref, probe))

    async def _lookup_tag(self, ref: ImageRef, probe: bool) -> Manifest | None:
        tag = ref.tag or "latest"
        host = ref.api_host
        key = f"{host}/{ref.repository}:{tag}"
        hint = self.cache.tag(key) if self.cache else None
        head_said_absent = False
        if (probe or (hint and self.cache and self.cache.has(hint))) and self._head_manners(host) != REFUSES:
            # whether a 404 to HEAD can be believed is asked alongside, not after: one round trip
            calibrating = asyncio.ensure_future(self._answers_head(ref)) if hint is None else None
            try:
                reply = await self.http.request(ref, "HEAD", f"manifests/{tag}")
            except BaseException:
                if calibrating is not None:
                    calibrating.cancel()
                raise
            if reply.status == 404 and calibrating is not None:
                # believed when the registry is known to answer HEAD and the tag had no
                # digest before; else a GET says (some registries answer 404 to every HEAD)
                if await calibrating == ANSWERS:
                    return None
            elif calibrating is not None:
                calibrating.cancel()  # not needed (stopped unless another lookup waits for it)
            if reply.status in HEAD_REFUSED:
                self._learn_head(host, REFUSES)
            elif reply.status == 404:
                head_said_absent = True
            else:
                self._learn_head(host, ANSWERS)
                digest = reply.headers.get("docker-content-digest", "")
                if _DIGEST.match(digest):
                    try:
                        body = await self._body(ref, "manifests", digest)
                    except _Absent:
                        raise RegistryError(ref.registry, f"{ref} answers HEAD but not GET of {digest[:19]}") from None
                    if self.cache:
                        self.cache.remember(key, digest)
                    return _parse_manifest(ref, _media(reply), digest, body)
        reply = await self.http.request(ref, "GET", f"manifests/{tag}")
        if reply.status == 404:
            return None
        if head_said_absent:
            self._learn_head(host, REFUSES)
        claimed = reply.headers.get("docker-content-digest", "")
        check = matches(claimed, reply.body) if claimed else None
        if check is False:
            raise RegistryError(ref.registry, f"the manifest of {ref} does not match its digest {claimed[:19]}")
        digest = claimed if check else digest_of(reply.body)
        self._keep(digest, reply.body)
        self._a_tag.setdefault(host, ref.with_tag(tag))
        if self.cache:
            self.cache.remember(key, digest)
        return _parse_manifest(ref, _media(reply), digest, reply.body)

    # -- a registry's manners with HEAD --------------------------------------------------
    def _head_manners(self, host: str) -> str | None:
        if host not in self._head and self.cache:
            known = self.cache.head_manners(host)
            if known:
                self._head[host] = known
        return self._head.get(host)

    def _learn_head(self, host: str, manners: str) -> None:
        if self._head.get(host) != manners:
            self._head[host] = manners
            if self.cache:
                self.cache.remember_head_manners(host, manners)

    async def _answers_head(self, ref: ImageRef) -> str | None:
        """Whether the registry answers HEAD truly: known, or asked once with HEAD of a tag
        this run found with GET (a registry that 404s that one refuses HEAD). None when
        there is no such tag yet: the caller asks with GET."""
        host = ref.api_host
        known = self._head_manners(host)
        if known is not None or host not in self._a_tag:
            return known
        return await self._calibrations.ask(host, lambda: self._calibrate(self._a_tag[host]))

    async def _calibrate(self, known: ImageRef) -> str:
        reply = await self.http.request(known, "HEAD", f"manifests/{known.tag}")
        manners = ANSWERS if reply.status < 300 else REFUSES
        self._learn_head(known.api_host, manners)
        return manners

    async def _not_found(self, ref: ImageRef) -> tuple[str, bool]:
        """Why `ref` was not found, and whether its repository exists: `repository not
        found`, or `tag not found; the repository has N tags` (plain `not found` when the
        registry will not list its tags)."""
        try:
            tags = await self._repo_tags(ref)
        except RegistryError:
            return "not found", True
        if tags is None:
            return "repository not found", False
        count = len(tags)
        many = "at least " if count >= TAGS_PAGE * MAX_TAG_PAGES else ""
        return f"tag not found; the repository has {many}{count} tag{'' if count == 1 else 's'}", True

    def _keep(self, digest: str, body: bytes) -> None:
        self._bodies.keep(digest, body)
        if self.cache:
            self.cache.put(digest, body)

    async def _body(self, ref: ImageRef, kind: str, digest: str) -> bytes:
        """A manifest or blob by digest: from this run, from disk, or GET (checked against
        the digest, so one fetched through any repository serves them all)."""
        return await self._bodies.ask(digest, lambda: self._fetch_body(ref, kind, digest))

    async def _fetch_body(self, ref: ImageRef, kind: str, digest: str) -> bytes:
        if self.cache:
            kept = self.cache.get(digest)
            if kept is not None:
                return kept
        reply = await self.http.request(ref, "GET", f"{kind}/{digest}", ACCEPT if kind == "manifests" else "*/*")
        if reply.status == 404:
            raise _Absent(digest)
        if matches(digest, reply.body) is False:
            raise RegistryError(ref.registry, f"{kind} {digest[:19]} of {ref.repository} does not match its digest")
        if self.cache:
            self.cache.put(digest, reply.body)
        return reply.body

    async def config_arch(self, ref: ImageRef, manifest: Manifest) -> str:
        """The architecture an image's config says it is (what the binaries are built for)."""
        if manifest.body.get("schemaVersion") == 1:  # legacy schema 1 carries it inline
            return arch_name(str(manifest.body.get("architecture", "")))
        return arch_name(str((await self.config(ref, manifest)).get("architecture", "")))

    async def config(self, ref: ImageRef, manifest: Manifest) -> Mapping[str, Any]:
        """An image manifest's config blob (by digest: asked once, kept on disk)."""
        config = manifest.body.get("config") or {}
        digest = str(config.get("digest", "")) if isinstance(config, Mapping) else ""
        if not _DIGEST.match(digest):
            raise RegistryError(ref.registry, f"manifest {manifest.digest[:19]} of {ref.repository} names no config")
        what = f"config {digest[:19]} of {ref.repository}"
        try:
            data = json.loads(await self._body(ref, "blobs", digest))
        except _Absent:
            raise RegistryError(ref.registry, f"{what} is not in the registry") from None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise RegistryError(ref.registry, f"{what} is not a JSON object")
        return data

    async def tags(self, reference: str) -> tuple[str, ...] | None:
        """The tags of `reference`'s repository, as its tag list (`/v2/<repo>/tags/list`)
        gives them, following its pages up to MAX_TAG_PAGES; None when the repository does
        not exist. Asked once per repository and run."""
        ref = parse_reference(reference)
        return await self._repo_tags(on_mirror(ref, self.mirror_for(ref.registry)))

    async def _repo_tags(self, ref: ImageRef) -> tuple[str, ...] | None:
        key = (ref.api_host, ref.repository)
        return await self._tag_lists.ask(key, lambda: self._tag_list(ref))

    async def _tag_list(self, ref: ImageRef) -> tuple[str, ...] | None:
        found: list[str] = []
        path: str | None = f"tags/list?n={TAGS_PAGE}"
        for _ in range(MAX_TAG_PAGES):
            if path is None:
                break
            reply = await self.http.request(ref, "GET", path, "application/json")
            if reply.status == 404:
                return None
            try:
                data = json.loads(reply.body)
            except ValueError:
                data = None
            # `"tags": null` is distribution's answer for a repository whose tags were all deleted
            tags = data.get("tags", "absent") if isinstance(data, dict) else "absent"
            if not isinstance(tags, list) and tags is not None:
                raise RegistryError(ref.registry, f"the tag list of {ref.repository} is not a JSON object with tags")
            found.extend(t for t in tags or () if isinstance(t, str) and _TAG.match(t))
            path = _next_page(str(reply.headers.get("link", "")), ref.repository)
        return tuple(dict.fromkeys(found))

    # -- verdicts -------------------------------------------------------------------
    async def resolve(self, reference: str, arch: str) -> Availability:
        """Whether `reference` is published for `arch`, and the per-arch digest to pull,
        asked of its registry's mirror when it has one. A mirror that lacks the tag is the
        mirror's gap (MirrorGap), never the component's `missing`; with `fallback` that, a
        mirror that fails, or one that lacks the arch is answered by the upstream registry."""
        upstream = parse_reference(reference)
        mirror = self.mirror_for(upstream.registry)
        if mirror is None:
            return await self._resolve(upstream, reference, arch)
        asked = on_mirror(upstream, mirror)
        try:
            found = await self._resolve(asked, reference, arch)
        except RegistryError as exc:
            if not self.fallback:
                raise
            return await self._fell_back(upstream, reference, arch, mirror, f"it could not be asked ({exc.reason})")
        if found.verdict is Verdict.AVAILABLE or found.verdict is Verdict.MISLABELLED:
            return replace(found, mirror=mirror.name)
        if not found.exists:  # the mirror has no such tag: its gap, whatever upstream publishes
            if self.fallback:
                return await self._fell_back(upstream, reference, arch, mirror, "it lacks the image")
            raise MirrorGap(mirror.name, f"{found.detail} (this mirror of {upstream.registry} lacks it)")
        if self.fallback:  # a copy of one arch only is a mirror's gap too: the upstream says
            return await self._fell_back(upstream, reference, arch, mirror, f"it lacks {arch}")
        return replace(found, mirror=mirror.name, detail=f"{found.detail} (as the mirror {mirror.name} serves it)")

    async def _fell_back(self, upstream: ImageRef, reference: str, arch: str, mirror: Mirror, why: str) -> Availability:
        try:
            found = await self._resolve(upstream, reference, arch)
        except RegistryError as exc:  # neither answers: both said
            raise RegistryError(exc.registry, f"{exc.reason} (asked because the mirror {mirror.name}: {why})") from None
        note = f"the mirror {mirror.name} was passed by: {why}; asked {upstream.registry}"
        return replace(found, detail=f"{found.detail}; {note}" if found.detail else note)

    async def _resolve(self, ref: ImageRef, reference: str, arch: str) -> Availability:
        top = await self.lookup(ref)
        repository_exists = True
        if top is None:
            why, repository_exists = await self._not_found(ref) if not ref.digest else ("not found", True)
            found = Availability(reference, arch, Verdict.MISSING, ref.registry, detail=f"{ref}: {why}", exists=False)
        else:
            found = await self._verdict(ref, reference, arch, top)
        if found.verdict is not Verdict.MISSING or ref.digest or not ref.tag or not repository_exists:
            return found
        suffixes = SUFFIXES.get(arch, (arch,))
        alts = [ref.with_tag(f"{ref.tag}-{suffix}") for suffix in suffixes]
        # asked together: usually none exists, and waiting for each in turn costs a round trip
        manifests = await asyncio.gather(*(self.lookup(alt, probe=True) for alt in alts))
        for alt, manifest in zip(alts, manifests, strict=True):
            if manifest is None:
                continue
            other = await self._verdict(alt, reference, arch, manifest)
            if other.verdict is Verdict.AVAILABLE:
                return replace(
                    other, found_as=f"tag {alt.tag}", found_tag=alt.tag or "", detail=f"available as {alt.tag}"
                )
        tried = " or ".join(f"{ref.tag}-{s}" for s in suffixes)
        return replace(found, detail=f"{found.detail}; no {tried} tag")

    async def _verdict(self, ref: ImageRef, reference: str, arch: str, top: Manifest, depth: int = 0) -> Availability:
        base = Availability(reference, arch, Verdict.MISSING, ref.registry)
        if not top.is_index:
            actual = await self.config_arch(ref, top)
            if actual != arch:
                detail = f"a single-arch image for {actual}"
                return replace(base, digest=top.digest, arches=(actual,), detail=detail)
            return replace(
                base,
                verdict=Verdict.AVAILABLE,
                digest=top.digest,
                size=manifest_size(top.body),
                found_as="single manifest",
                arches=(actual,),
                pull_reference=ref.pull_name(top.digest),
            )
        platforms = index_platforms(top.body)
        arches = tuple(sorted({a for a, _ in platforms}))
        base = replace(base, index_digest=top.digest, arches=arches)
        entry = pick_entry(platforms, arch)
        if entry is None:
            return replace(base, detail=f"the index publishes {', '.join(arches) or 'no platforms'} only")
        digest = str(entry.get("digest", ""))
        child = await self.lookup(ref.at(digest)) if _DIGEST.match(digest) else None
        if child is None:
            return replace(base, detail=f"the index lists {arch} but its manifest {digest[:19]} is not there")
        if child.is_index:
            if depth:
                return replace(base, detail=f"the index entry for {arch} is a nested index")
            nested = await self._verdict(ref, reference, arch, child, depth + 1)
            return replace(nested, index_digest=top.digest, arches=arches)
        actual = await self.config_arch(ref, child)
        if actual != arch:
            return replace(
                base,
                verdict=Verdict.MISLABELLED,
                digest=digest,
                detail=f"the index says {arch}, the image's config says {actual}",
            )
        return replace(
            base,
            verdict=Verdict.AVAILABLE,
            digest=digest,
            size=manifest_size(child.body),
            found_as="index",
            pull_reference=ref.pull_name(digest),
        )


def _next_page(link: str, repository: str) -> str | None:
    """The next page of a tag list from its `Link: </v2/<repo>/tags/list?last=…>; rel="next"`
    header, as a path below the repository; None when there is none or it points elsewhere."""
    found = re.search(r'<([^>]*)>\s*;\s*rel="?next"?', link)
    prefix = f"/v2/{repository}/"
    if found is None:
        return None
    target = found.group(1)
    at = target.find(prefix)
    if at < 0 or not target[at + len(prefix) :].startswith("tags/list?"):
        return None
    return target[at + len(prefix) :]


def _media(reply: Reply) -> str:
    return str(reply.headers.get("content-type", "")).split(";")[0].strip()


def _parse_manifest(ref: ImageRef, media: str, digest: str, body: bytes) -> Manifest:
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise RegistryError(ref.registry, f"the manifest of {ref} is not a JSON object")
    return Manifest(media or str(data.get("mediaType", "")), digest, data)
