"""An image asked through its registry's mirror, and whose the answer is.

Every answer that went through a mirror names it (`Availability.mirror`), and one the
upstream registry gave instead (`[registry] fallback = true`) says why the mirror was
passed by (`Availability.fallback`: the mirror's cause). A mirror's trouble is the
mirror's, never the component's nor the upstream's:

- it has no such tag or repository: `MirrorGap` (with fallback: the upstream answers);
- its copy has the tag without the arch asked: the upstream is asked whether it publishes
  it (one lookup, the mirror's answer is not taken from it): when it does, or cannot say,
  the mirror is behind (`MirrorBehind`), never the component's `missing`; when it agrees,
  the component's `missing` stands, saying both agree (with fallback: the upstream answers);
- it cannot be asked (unreachable, hanging, refusing our login, an answer that does not
  match its digest): `MirrorDown` with its own words (with fallback: the upstream answers;
  when that fails too, both are said).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from ecoready.domain.blame import Cause
from ecoready.domain.errors import MirrorBehind, MirrorDown, MirrorGap, RegistryError
from ecoready.domain.images import Availability, Verdict
from ecoready.matrix.document import Mirror
from ecoready.registry.manifests import ImageRef, on_mirror

# (ref, reference as the matrix wrote it, arch) -> the registry's verdict (RegistryClient.resolve_at)
Ask = Callable[[ImageRef, str, str], Awaitable[Availability]]
_FOUND = (Verdict.AVAILABLE, Verdict.MISLABELLED)


async def through_mirror(
    ask: Ask, upstream: ImageRef, reference: str, arch: str, mirror: Mirror, *, fallback: bool
) -> Availability:
    """`reference` on `arch` as `mirror` answers it (or, with `fallback`, its upstream)."""
    try:
        found = await ask(on_mirror(upstream, mirror), reference, arch)
    except RegistryError as exc:
        if fallback:
            return await _fell_back(ask, upstream, reference, arch, mirror, Cause.MIRROR_DOWN, exc.reason)
        raise MirrorDown(mirror.name, f"{exc.reason} (this mirror of {upstream.registry})") from None
    found = replace(found, mirror=mirror.name)
    if found.verdict in _FOUND:
        return found
    if not found.exists:  # no such tag or repository on the mirror: its gap, whatever upstream publishes
        if fallback:
            return await _fell_back(ask, upstream, reference, arch, mirror, Cause.MIRROR_GAP, "it lacks the image")
        raise MirrorGap(mirror.name, f"{found.detail} (this mirror of {upstream.registry} lacks it)")
    if fallback:  # a copy without the arch: the upstream says
        return await _fell_back(ask, upstream, reference, arch, mirror, Cause.MIRROR_BEHIND, f"its copy lacks {arch}")
    return await _second_opinion(ask, upstream, reference, arch, mirror, found)


async def _second_opinion(
    ask: Ask, upstream: ImageRef, reference: str, arch: str, mirror: Mirror, found: Availability
) -> Availability:
    """The mirror's copy lacks `arch`: the component's `missing` only when the upstream agrees."""
    served = f"{found.detail} (as this mirror of {upstream.registry} serves it)"
    try:
        upstream_says = await ask(upstream, reference, arch)
    except RegistryError as exc:
        raise MirrorBehind(
            mirror.name,
            f"{served}; {upstream.registry} could not be asked whether it publishes {arch} ({exc.reason})",
        ) from None
    if upstream_says.verdict in _FOUND:
        raise MirrorBehind(mirror.name, f"{served}, while {upstream.registry} publishes {arch}: the mirror is behind")
    agreed = f"as the mirror {mirror.name} serves it, and {upstream.registry} publishes no {arch} either"
    return replace(found, detail=f"{found.detail} ({agreed})")


async def _fell_back(
    ask: Ask, upstream: ImageRef, reference: str, arch: str, mirror: Mirror, trouble: Cause, why: str
) -> Availability:
    """The upstream's answer, saying that (and why) the mirror was passed by."""
    words = f"it could not be asked ({why})" if trouble is Cause.MIRROR_DOWN else why
    try:
        found = await ask(upstream, reference, arch)
    except RegistryError as exc:  # neither answers: both said
        reason = f"{exc.reason} (asked because the mirror {mirror.name}: {words})"
        raise RegistryError(exc.registry, reason, mirror=mirror.name, fallback=trouble) from None
    note = f"the mirror {mirror.name} was passed by: {words}; asked {upstream.registry}"
    detail = f"{found.detail}; {note}" if found.detail else note
    return replace(found, detail=detail, mirror=mirror.name, fallback=trouble)
