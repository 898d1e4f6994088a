"""The tag watch's one look at the registries: per image reference, the arches its tag
publishes, each arch's digest, and the publication time where the index or the image
config says it; for a watched arch the tag lacks, another tag of the same line that
publishes it (`tag_search.py`, as the migration plan searches).

No container, and no request `ecoready images` would not make: the tag is asked once (HEAD
when its manifest is on disk already), the index's children and the configs of the
watched arches by digest (from the disk cache after the first time), all through the
run's `RegistryClient` (its mirrors, manners and cache). A registry that cannot be asked
gives `TagSeen.error`, never a verdict on the image.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ecoready.domain.errors import RegistryError
from ecoready.domain.tagwatch import ArchImage, NewerTag, TagSeen
from ecoready.domain.text import inert
from ecoready.registry.client import RegistryClient
from ecoready.registry.manifests import (
    ImageRef,
    Manifest,
    arch_name,
    index_platforms,
    on_mirror,
    parse_reference,
    pick_entry,
)
from ecoready.registry.tag_search import search_tags

CREATED = "org.opencontainers.image.created"  # the index annotation of its publication time
_TIME_CHARS = 40  # a timestamp is short; a registry's longer text is cut


def _time(value: object) -> str:
    return inert(value, _TIME_CHARS) if isinstance(value, str) else ""


async def observe_all(
    client: RegistryClient,
    references: Sequence[str],
    arches: Sequence[str],
    searched: Mapping[str, Collection[str]] | None = None,
) -> tuple[TagSeen, ...]:
    """Every reference (each once), asked at once; in the order given. `searched`: per
    reference, the lacking arches whose other tags need no search this time."""
    unique = list(dict.fromkeys(references))
    return tuple(await asyncio.gather(*(observe(client, r, arches, (searched or {}).get(r, ())) for r in unique)))


async def observe(
    client: RegistryClient, reference: str, arches: Sequence[str], searched: Collection[str] = ()
) -> TagSeen:
    """What `reference`'s tag publishes now (never raises RegistryError); other tags are
    searched for each watched arch it lacks, but those of `searched`."""
    upstream = parse_reference(reference)
    ref = on_mirror(upstream, client.mirror_for(upstream.registry))
    try:
        top = await client.lookup(ref)
        if top is None:
            return TagSeen(reference, found=False)
        if top.is_index:
            published = _annotated(top.body)
            images = await _index_arches(client, ref, top, arches, published)
        else:
            images, published = (await _single(client, ref, top),), ""
    except RegistryError as exc:
        return TagSeen(reference, registry=exc.registry, error=exc.reason)
    seen = {image.arch for image in images}
    lacking = [arch for arch in arches if arch not in seen and arch not in searched]
    newer = await asyncio.gather(*(_newer(client, reference, arch) for arch in lacking))
    return TagSeen(reference, images, published, tuple(n for n in newer if n is not None), tuple(lacking))


def _annotated(body: Mapping[str, Any]) -> str:
    """The `org.opencontainers.image.created` annotation of an index or an index entry."""
    annotations = body.get("annotations")
    return _time(annotations.get(CREATED)) if isinstance(annotations, Mapping) else ""


async def _index_arches(
    client: RegistryClient, ref: ImageRef, top: Manifest, watched: Sequence[str], index_created: str
) -> tuple[ArchImage, ...]:
    """Each arch of the index with its digest and when it was made: its config's `created`,
    else its entry's annotation, else the index's (the watched arches' configs are read)."""
    platforms = index_platforms(top.body)
    out = []
    for arch in sorted({a for a, _ in platforms}):
        entry = pick_entry(platforms, arch)
        digest = str(entry.get("digest", "")) if entry is not None else ""
        if entry is None or not digest:
            continue
        created = await _created(client, ref.at(digest)) if arch in watched else ""
        out.append(ArchImage(arch, digest, created or _annotated(entry) or index_created))
    return tuple(out)


async def _created(client: RegistryClient, ref: ImageRef) -> str:
    """The `created` of the image `ref` (a digest) names, from its config; "" when it has none."""
    child = await client.lookup(ref)
    if child is None or child.is_index or child.body.get("schemaVersion") == 1:
        return ""
    return _time((await client.config(ref, child)).get("created"))


async def _single(client: RegistryClient, ref: ImageRef, top: Manifest) -> ArchImage:
    if top.body.get("schemaVersion") == 1:  # legacy schema 1 carries its arch inline, no config
        return ArchImage(arch_name(str(top.body.get("architecture", ""))), top.digest)
    config: Mapping[str, Any] = await client.config(ref, top)
    return ArchImage(arch_name(str(config.get("architecture", ""))), top.digest, _time(config.get("created")))


async def _newer(client: RegistryClient, reference: str, arch: str) -> NewerTag | None:
    """Another tag of the same line that publishes `arch` (the plan's tag search), if any."""
    found = await search_tags(client, reference, reference, arch)
    if found.use_tag:
        return NewerTag(arch, found.use_tag, same_version=True)
    if found.upgrade_to:
        return NewerTag(arch, found.upgrade_to, same_version=False)
    return None
