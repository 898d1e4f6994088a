"""Images of a run: resolved in their registry, pulled once per host and arch, verified.

Pulls go by per-arch digest (`repo@sha256:…`), never by tag: pulling a second platform of
a tag retags it, and parallel cells of two arches would then run each other's image.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from app.docker_host import DockerHost
from app.errors import EcoreadyError
from app.model import ImageInfo
from app.registry import RegistryClient


class ImageUnavailable(EcoreadyError):
    """Not published for the arch (missing) or not what it claims (mislabelled)."""

    def __init__(self, detail: str, *, missing: bool) -> None:
        super().__init__(detail)
        self.missing = missing


@dataclass
class ImageStore:
    host: DockerHost
    registry: RegistryClient
    _pending: dict[tuple[str, str], asyncio.Future[ImageInfo]] = field(default_factory=dict)

    async def ensure(self, reference: str, arch: str) -> ImageInfo:
        key = (reference, arch)
        future = self._pending.get(key)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._pending[key] = future
            try:
                future.set_result(await self._fetch(reference, arch))
            except BaseException as exc:
                self._pending.pop(key, None)  # a later cell may try again (e.g. after a blip)
                future.set_exception(exc)
                future.exception()
                raise
        return await asyncio.shield(future)

    async def _fetch(self, reference: str, arch: str) -> ImageInfo:
        found = await self.registry.resolve(reference, arch)
        if found.status != "available":
            raise ImageUnavailable(found.detail, missing=found.status == "missing")
        image_id = await self.host.pull(found.pull_reference, f"linux/{arch}")
        _, actual = await self.host.image_platform(image_id)
        if actual != arch:
            raise ImageUnavailable(f"mislabelled: pulled for {arch}, the image says {actual}", missing=False)
        return ImageInfo(
            reference=reference,
            arch=arch,
            digest=found.digest,
            index_digest=found.index_digest,
            size=found.size,
            found_as=found.found_as,
            image_id=image_id,
        )
