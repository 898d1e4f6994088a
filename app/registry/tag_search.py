"""A cell's image is missing for its arch: does another tag of the repository publish it?

Asked of the repository's tag list (`RegistryClient.tags`), then of a bounded number of
manifests (through `RegistryClient.resolve`, so every answer is cached like any other):
first tags of the same version under another name (`8.0.32-aarch64`, `1-arm64v8`), the
arch-named ones first: `use TAG`; else the newer versions of the same flavour (`10.11` ->
`10.11.6`, `11.4`; `1-jammy` -> `2-jammy`), newest first, down to the oldest that still
publishes the arch: `upgrade to >= VERSION`. The registry's trouble ends the search with
its reason; it never changes the cell's verdict.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ecoready.domain.errors import RegistryError
from ecoready.domain.images import Verdict
from ecoready.domain.model import TagSearch
from ecoready.registry.client import RegistryClient
from ecoready.registry.manifests import parse_reference

MAX_MANIFESTS = 12  # tags whose manifests one search asks at most
_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)(.*)\Z")
# How tags name an arch (`1-aarch64`, `8.0-arm64v8`): such variants are tried first.
_ARCH_WORDS: dict[str, tuple[str, ...]] = {"arm64": ("arm64", "aarch64", "arm64v8"), "amd64": ("amd64", "x86_64")}


def version_of(tag: str) -> tuple[tuple[int, ...], str] | None:
    """`10.11.6-jammy` -> ((10, 11, 6), "-jammy"); None for a tag that is no version."""
    found = _VERSION.match(tag)
    if found is None:
        return None
    return tuple(int(n) for n in found.group(1).split(".")), found.group(2)


def variants(pinned: str, tags: Sequence[str], arch: str) -> list[str]:
    """Other names of the pinned tag (`TAG-…`, `TAG_…`), those naming the arch first."""
    named = _ARCH_WORDS.get(arch, (arch,))
    found = [t for t in tags if t != pinned and t.startswith((f"{pinned}-", f"{pinned}_"))]
    return sorted(found, key=lambda t: (not any(w in t[len(pinned) :].lower() for w in named), t))


def newer(pinned: str, tags: Sequence[str]) -> list[str]:
    """Tags of a later version with the pinned tag's flavour (its suffix), newest first."""
    base = version_of(pinned)
    if base is None:
        return []
    numbers, suffix = base
    later = [(v[0], t) for t in tags if (v := version_of(t)) is not None and v[1] == suffix and v[0] > numbers]
    return [t for _, t in sorted(later, key=lambda item: (item[0], item[1]), reverse=True)]


async def search_tags(
    client: RegistryClient, component: str, reference: str, arch: str, *, budget: int = MAX_MANIFESTS
) -> TagSearch:
    """What the repository of `reference` offers for `arch` (never raises RegistryError)."""
    ref = parse_reference(reference)
    if ref.digest or not ref.tag:
        return TagSearch(component, arch, reference, error="pinned by digest: no tags to search")
    pinned = ref.tag
    looked = 0

    async def publishes(tag: str) -> bool:
        nonlocal looked
        looked += 1
        answer = await client.resolve(str(ref.with_tag(tag)), arch)
        return answer.verdict is Verdict.AVAILABLE

    try:
        tags = await client.tags(reference) or ()
        for tag in variants(pinned, tags, arch)[:budget]:
            if await publishes(tag):
                return TagSearch(component, arch, reference, len(tags), looked, use_tag=tag)
        oldest = ""
        for tag in newer(pinned, tags):
            if looked >= budget:
                break
            if await publishes(tag):
                oldest = tag
            elif oldest:
                break  # the arch begins after this version
        return TagSearch(component, arch, reference, len(tags), looked, upgrade_to=oldest)
    except RegistryError as exc:
        return TagSearch(component, arch, reference, looked_at=looked, error=exc.reason)
