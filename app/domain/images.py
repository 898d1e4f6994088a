"""What a registry says about an image: whether it is published for an arch (`Verdict`,
`Availability`, one row of `ecoready images` each), what the image stage learned of the
image a cell ran (`ImageInfo`), and each registry as a run saw it (`RegistryStatus`).
Frozen data, like the rest of the model."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ecoready.domain.blame import Cause


@dataclass(frozen=True)
class ImageInfo:
    """What the image stage learned about the image of one cell."""

    reference: str
    arch: str
    digest: str = ""  # per-arch manifest digest
    index_digest: str = ""
    size: int | None = None
    found_as: str = ""  # how availability was found, in words: "index", "single manifest", "tag 1-aarch64"
    image_id: str = ""  # local image id once pulled
    mirror: str = ""  # the registry mirror asked (host[/prefix]); "" none: the upstream registry itself
    found_tag: str = ""  # the tag it was found under instead of the matrix's (a `TAG-aarch64`); "" its own
    # the mirror's trouble that had the upstream registry asked instead (`fallback`): mirror-gap,
    # mirror-behind or mirror-down; None: the mirror answered (or there is none)
    fallback: Cause | None = None


class Verdict(str, enum.Enum):
    """Is an image published for an arch? Asked of the registry, without pulling."""

    AVAILABLE = "available"
    MISSING = "missing"  # not published for the arch (nor under an arch-suffixed tag)
    MISLABELLED = "mislabelled"  # the index says this arch, the image's config says another
    # the registry answered that it wants a login that is not configured (a private image,
    # or on Docker Hub a repository that does not exist): the user's to provide, not a fault
    LOCKED = "locked"
    ERROR = "error"  # the registry could not be asked: infrastructure, never the component


@dataclass(frozen=True)
class Availability:
    """What the registry says about one image reference on one arch."""

    reference: str  # as the matrix wrote it
    arch: str
    verdict: Verdict
    registry: str = ""  # the registry asked (after a mirror rewrite)
    digest: str = ""  # per-arch manifest digest
    index_digest: str = ""
    size: int | None = None  # compressed: config + layers
    found_as: str = ""  # in words: "index", "single manifest", "tag 10.11-aarch64"
    detail: str = ""  # one line: how it was found, or why not (the verdict is not repeated)
    arches: tuple[str, ...] = ()  # what the reference publishes
    pull_reference: str = ""  # repo@digest to pull for this arch
    exists: bool = True  # False: the reference names no image at all (not even a tag)
    mirror: str = ""  # the registry mirror asked (host[/prefix]); "" none: the upstream registry itself
    found_tag: str = ""  # the tag it was found under instead of the reference's ("10.11-aarch64"); "" its own
    fallback: Cause | None = None  # the mirror's trouble that had the upstream answer instead (ImageInfo's)


@dataclass(frozen=True)
class RegistryStatus:
    """One registry as a run saw it: requests made, Docker Hub's rate limit, failures."""

    registry: str
    requests: int = 0  # HTTP requests, token requests included
    limit: int | None = None  # RateLimit-Limit
    remaining: int | None = None  # RateLimit-Remaining
    window_s: int | None = None  # the limit's window (the `w=` of the header)
    source: str = ""  # whom the limit counts: "ip" (anonymous) or "account"; never the value
    error: str = ""  # the last reason it could not be asked (one line, no secrets)
    waited_s: float = 0.0  # seconds this run paused because it asked to (429 with Retry-After)


@dataclass(frozen=True)
class ImageCheck:
    """One row of `ecoready images`: a component's image on one arch."""

    component: str
    name: str
    arch: str
    availability: Availability


@dataclass(frozen=True)
class ImagesReport:
    matrix: str
    checked_at: str
    seconds: float
    checks: tuple[ImageCheck, ...] = ()
    registries: tuple[RegistryStatus, ...] = ()
    notes: tuple[str, ...] = ()
