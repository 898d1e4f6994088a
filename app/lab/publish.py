"""Publishing the lab to its local registry: each arch's image to its per-arch repository
(`<arch>/<name>:<tag>`), then the multi-arch indexes (`lab/<name>:<tag>`, its aliases and
its stand-in names; the Debian bases as the stand-in's `debian:<suite>-slim`).

An index always lists every arch the registry holds for it, not only the arches of this
build: a build of one arch (`lab build --arch arm64`, as `make demo` runs its emulated arch
after the native one) keeps the other arch the index pointed at, whichever build writes it
last. After writing, the arches present are read again and the index rewritten if another
build published an arch meanwhile (two builds of different arches at once)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ecoready.domain.errors import EnvironmentProblem
from ecoready.engine.aio import together
from ecoready.lab.builders import Builders
from ecoready.lab.oci_writer import IndexEntry, RegistryWriter
from ecoready.lab.recipes import ARCHES, REGISTRY, STAND_IN, STAND_IN_BASES, LabImage, image_tag, stand_in_repository

# how many times an index is rewritten when other builds keep adding arches meanwhile
_SETTLE_ROUNDS = 5


def arches_published(writer: RegistryWriter, name: str, tag: str, arches: Sequence[str]) -> list[str]:
    """The arches (in `arches`' order) whose per-arch repository `<arch>/<name>` holds `tag`."""
    return [arch for arch in arches if writer.manifest(f"{arch}/{name}", tag) is not None]


def write_index(
    writer: RegistryWriter, name: str, tag: str, arches: Sequence[str], targets: Sequence[tuple[str, str]]
) -> list[str]:
    """Each of `targets` (repository, tag) made an index over every arch of `arches` that
    `<arch>/<name>:<tag>` holds, until no other build adds one meanwhile; the arches listed."""
    listed: list[str] = []
    for _ in range(_SETTLE_ROUNDS):
        present = arches_published(writer, name, tag, arches)
        if present == listed:
            break
        for repo, target_tag in targets:
            index = [
                IndexEntry(
                    writer.copy_manifest(f"{arch}/{name}", tag, repo), "linux", arch, "v8" if arch == "arm64" else None
                )
                for arch in present
            ]
            writer.put_index(repo, target_tag, index)
        listed = present
    return listed


class Publisher(Builders):
    async def _push(self, writer: RegistryWriter, local: str, name: str, tag: str, arch: str) -> None:
        """`local` pushed as `<arch>/<name>:<tag>` unless the registry holds that image."""
        image_id = await self.host.images.image_id(local)
        current = await asyncio.to_thread(writer.manifest, f"{arch}/{name}", tag)
        if current is not None and current.json.get("config", {}).get("digest") == image_id:
            return
        # in a build slot, after the steps waiting for one: the engine gzips the layers on a
        # core, which the builds of the images still to come share
        async with self.book.slot():
            self.log(f"lab: pushing {arch}/{name}:{tag}")
            await self.host.images.tag(local, f"{REGISTRY}/{arch}/{name}", tag)
            await self.host.images.push(f"{REGISTRY}/{arch}/{name}", tag)

    async def publish(self, image: LabImage, arches: Sequence[str]) -> None:
        """Per-arch repositories <arch>/<name>:<tag>, then the index lab/<name>:<tag>, its
        aliases and stand-in names, over every arch the registry holds."""
        writer = RegistryWriter(f"http://{REGISTRY}")
        try:
            for arch in arches:
                await self._image_id(image_tag(image, arch))  # built, else say so before pushing any
            # the arches at once (a slot each): the engine gzips a layer on one core, and the
            # arches' images share no base layer (a failed push cancels the other)
            await together(*(self._push(writer, image_tag(image, a), image.name, image.tag, a) for a in arches))
            targets = [(f"lab/{name}", tag) for name, tag in ((image.name, image.tag), *image.aliases)]
            targets += [(stand_in_repository(repo), tag) for repo, tag in image.upstream]  # the stand-ins
            await asyncio.to_thread(write_index, writer, image.name, image.tag, image.arches, targets)
        finally:
            writer.close()

    async def publish_bases(self, arches: Sequence[str]) -> None:
        """The Debian bases as the stand-in's `debian:<suite>-slim` (per-arch repositories
        <arch>/debian, then the index hub/library/debian over every arch published), for the
        tool images derived from them (the bench stage's sysbench)."""
        writer = RegistryWriter(f"http://{REGISTRY}")
        try:
            for suite in STAND_IN_BASES:
                tag = f"{suite}-slim"
                for arch in arches:
                    await self._push(writer, await self.base(suite, arch), "debian", tag, arch)
                targets = [(f"{STAND_IN}/library/debian", tag)]
                await asyncio.to_thread(write_index, writer, "debian", tag, ARCHES, targets)
        finally:
            writer.close()

    async def _image_id(self, reference: str) -> str:
        labels = await self.host.images.image_labels(reference)
        if labels is None:
            raise EnvironmentProblem(f"{reference} is not built: run `ecoready lab build`")
        return await self.host.images.image_id(reference)
