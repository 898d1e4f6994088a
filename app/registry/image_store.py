"""Images of a run: resolved in their registry, pulled once per host and arch, verified.

Pulls go by per-arch digest (`repo@sha256:…`), never by tag: pulling a second platform of
a tag retags it, and parallel cells of two arches would then run each other's image. An
arch found under a vendor's suffixed tag (`10.11-aarch64`) is pulled by that tag's digest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ecoready.domain.blame import Cause
from ecoready.domain.errors import ImageUnavailable, LoginRequired, MirrorGap, RegistryError
from ecoready.domain.flight import Flights
from ecoready.domain.images import Availability, ImageInfo, Verdict
from ecoready.registry.client import RegistryClient


class EnginePulls(Protocol):
    """What the store asks of an engine's images (`engine.images.EngineImages`)."""

    async def pull(self, reference: str, platform: str) -> str: ...

    async def image_platform(self, image: str) -> tuple[str, str]: ...


class PullingHost(Protocol):
    """The engine the images are pulled into (`engine.docker_host.DockerHost`)."""

    @property
    def images(self) -> EnginePulls: ...


@dataclass
class ImageStore:
    host: PullingHost
    registry: RegistryClient
    # registry -> (image checks it failed, the last reason): one note per registry at the end
    unchecked: dict[str, tuple[int, str]] = field(default_factory=dict)
    # (reference, arch) -> its pull, shared by the cells asking; a cell out of budget leaves
    # it to the others, a failure is not remembered (a later cell may try again after a blip)
    _pulls: Flights[tuple[str, str], ImageInfo] = field(default_factory=Flights.memo)

    async def ensure(self, reference: str, arch: str, *, for_cell: bool = True) -> ImageInfo:
        """The image pulled for `arch`. `for_cell=False` (the platform survey): a registry
        failure is not counted among the cells it left unchecked."""
        try:
            return await self._pulls.ask((reference, arch), lambda: self._fetch(reference, arch))
        except RegistryError as exc:
            if for_cell and not isinstance(exc, (MirrorGap, LoginRequired)):  # said per cell: the image's, the user's
                count, _ = self.unchecked.get(exc.registry, (0, ""))
                self.unchecked[exc.registry] = (count + 1, exc.reason)
            raise

    async def _fetch(self, reference: str, arch: str) -> ImageInfo:
        found = await self.registry.resolve(reference, arch)
        if found.verdict is not Verdict.AVAILABLE:
            raise ImageUnavailable(found.detail, cause=unavailable(found))
        image_id = await self.host.images.pull(found.pull_reference, f"linux/{arch}")
        _, actual = await self.host.images.image_platform(image_id)
        if actual != arch:
            raise ImageUnavailable(f"pulled for {arch}, the image says {actual}", cause=Cause.MISLABELLED_IMAGE)
        return ImageInfo(
            reference=reference,
            arch=arch,
            digest=found.digest,
            index_digest=found.index_digest,
            size=found.size,
            found_as=found.found_as,
            found_tag=found.found_tag,
            image_id=image_id,
            mirror=found.mirror,
            fallback=found.fallback,
        )


def unavailable(found: Availability) -> Cause:
    """Who is blamed for an image that is not there for the arch: its publisher, for not
    publishing it (or not under this name at all), or for labelling it wrongly."""
    if found.verdict is Verdict.MISLABELLED:
        return Cause.MISLABELLED_IMAGE
    return Cause.NOT_PUBLISHED if found.exists else Cause.NO_SUCH_IMAGE
