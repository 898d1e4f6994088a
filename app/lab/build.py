"""The offline lab: real components without any public registry.

Base images come from debootstrap for each arch; component images are built from Debian
packages on top (containers/<name>/Dockerfile); all are published to a local registry
(Debian's docker-registry on 127.0.0.1) as multi-arch indexes, next to per-arch
repositories like the official images have (`amd64/mariadb`, `arm64/mariadb`).

Everything is cached by recipe: an image is rebuilt only when its Dockerfile context, its
base or its build arguments changed (a label holds the recipe hash), and pushed only when
the registry does not already hold that exact image.

An image may name a *builder*: an image built once, natively, that compiles what would be
slow to compile under emulation (C, C++ and Go cross-compiled for every arch, Java
bytecode) into /out. The lab copies /out into a generated build context for the image, so the per-arch
builds only COPY the artifacts; the builder's recipe is part of the image's recipe.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ecoready.domain.errors import EngineError
from ecoready.engine.platform import host_arch
from ecoready.lab.core import appender, emulation_env, owner_labels
from ecoready.lab.gaps import GAPS, SOURCE_NAME, SOURCE_TAG, gap_sources_published, publish_gaps
from ecoready.lab.local_registry import registry_up
from ecoready.lab.oci_writer import RegistryWriter
from ecoready.lab.publish import Publisher
from ecoready.lab.recipes import (
    ARCHES,
    BUILD_TIMEOUT,
    IMAGES,
    RECIPE_LABEL,
    REGISTRY,
    STAND_IN,
    LabImage,
    apt_into,
    builder_named,
    containers_dir,
    context_hash,
    files_hash,
    image_named,
    image_tag,
    native_tools_file,
    recipe_hash,
)
from ecoready.lab.schedule import cost_table

__all__ = ["Lab"]


class Lab(Publisher):
    """The whole lab: bases, builders, publishing (the classes below it) and the component
    images, built in slots, longest chains first."""

    def chain(self, image: LabImage, arch: str) -> float:
        """Seconds expected for the image and its bases, were all to be built."""
        emulated = arch != host_arch()
        below = (
            self.chain(image_named(image.on), arch)
            if image.on
            else self.book.expected(f"base {image.suite}", arch, emulated)
        )
        return self.book.expected(image.key, arch, emulated) + below

    def recipe(self, image: LabImage, arch: str) -> str:
        """The image's recipe, computed without building anything (its base's, or the
        image it is built on, are pure functions too)."""
        below = self.recipe(image_named(image.on), arch) if image.on else self.base_recipe(image.suite, arch)
        return self.image_recipe(image, below)

    async def image(self, image: LabImage, arch: str) -> str:
        """The image built for the arch (once per build: an image built on it asks too)."""
        return await self._images.ask((image.key, arch), lambda: self._image(image, arch))

    async def _image(self, image: LabImage, arch: str) -> str:
        if image.on:
            base = await self.image(image_named(image.on), arch)
        else:
            base = await self.base(image.suite, arch, self.chain(image, arch))
        base_labels = await self.host.images.image_labels(base) or {}
        context = containers_dir() / image.context
        recipe = self.image_recipe(image, base_labels.get(RECIPE_LABEL, ""))
        # ARCH picks this arch's artifacts from out/; QEMU_CPU, the CPU its emulated RUN
        # steps see (an image's Dockerfile declares it where a step runs long)
        buildargs = {"BASE": base, **({"ARCH": arch} if image.builder is not None else {}), **emulation_env(arch)}
        tag = image_tag(image, arch)
        labels = await self.host.images.image_labels(tag)
        if labels is not None and labels.get(RECIPE_LABEL) == recipe:
            self._cost(image.key, arch, None)
            return tag
        # the machine's own base of the suite runs the install: asked for before the slot,
        # which its own build may need
        native = (
            base
            if arch == host_arch() and not image.on
            else await self.base(image.suite, host_arch(), self.chain(image, arch))
        )
        if image.builder is not None or image.files:
            context = await self.build_context(image)
        async with self.book.slot(self.book.expected(image.key, arch, arch != host_arch())):
            started = time.monotonic()
            hint = " (maintainer scripts under emulation)" if arch != host_arch() else ""
            self.log(f"lab: building {image.key} for {arch}{hint}")
            logfile = self._logfile(f"{image.name}-{image.tag}-{arch}")
            work = self.lab_dir / "work" / f"install-{image.name}-{image.tag}-{arch}"
            try:
                await self._install(image, arch, base, native, context, work, logfile)
                await self._build(work, tag, arch, buildargs, recipe, logfile)
            finally:
                await asyncio.to_thread(shutil.rmtree, work, True)
        self.log(f"lab: {image.key} for {arch} built in {time.monotonic() - started:.0f} s")
        self._cost(image.key, arch, started)
        return tag

    async def _install(
        self, image: LabImage, arch: str, base: str, native: str, context: Path, work: Path, logfile: Path
    ) -> None:
        """Make `work` the build context of `image` for `arch`: `context`'s files and
        rootfs.tar, the arch's base with the image's packages installed. The install runs in
        `native`, the machine's own base of the suite (containers/base/apt-into says how)."""
        archive = await self.host.images.copy_from_image(base, "/", labels=owner_labels("lab-copy-out"))

        def prepare(archive: bytes) -> None:
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(context, work)
            (work / "base.tar").write_bytes(archive)
            shutil.copy2(apt_into(), work / "apt-into")

        await asyncio.to_thread(prepare, archive)
        del archive  # the base's file system, ~140 MB: not held while the install runs
        # the maintainer scripts' tools, natively (lab/native_tools.py): apt-into uses /native
        tools = await self.native_tools(image.suite) if arch != host_arch() else None
        binds = [f"{work}:/work", "/proc:/target/proc:ro", *([f"{tools}:/native:ro"] if tools else [])]
        env = {
            "ARCH": arch,
            "PACKAGES": " ".join(image.packages),
            "APT_OPTIONS": " ".join(image.apt_options),
            "EXTRA_SUITE": image.extra_suite,
            **emulation_env(arch),  # the maintainer scripts' own programs run emulated
        }
        exit_code = await self.host.images.run_to_end(
            native,
            ["sh", "/work/apt-into"],
            env=env,
            # maintainer scripts run chrooted in /target; some need a /proc (java's)
            binds=binds,
            labels=owner_labels("lab-install"),
            log=appender(logfile),
            timeout=BUILD_TIMEOUT[arch],
        )
        (work / "apt-into").unlink()
        if exit_code != 0:
            self._log_tail(logfile)
            raise EngineError(f"installing the packages of {image.key} for {arch} failed (exit {exit_code})")

    def image_recipe(self, image: LabImage, base_recipe: str) -> str:
        parts: list[str | bytes] = [
            "image-v2",
            base_recipe,
            context_hash(containers_dir() / image.context),
            " ".join(image.packages),
            " ".join(image.apt_options),
            image.extra_suite,
            apt_into().read_bytes(),
            native_tools_file().read_bytes(),
        ]
        if image.builder is not None:
            parts.append(self.builder_recipe(builder_named(image.builder)))
        if image.files:
            parts.append(files_hash(image.files))
        return recipe_hash(*parts)

    async def start_builders(self, images: Sequence[LabImage], arches: Sequence[str]) -> None:
        """Start the builders of out-of-date images now: native work that then overlaps the
        other images' builds (the emulated track above all) instead of starting only when
        a track reaches the image."""
        for image in images:
            if image.builder is None:
                continue
            for arch in (a for a in arches if a in image.arches):
                labels = await self.host.images.image_labels(image_tag(image, arch))
                expected = self.recipe(image, arch)
                if labels is None or labels.get(RECIPE_LABEL) != expected:
                    builder = builder_named(image.builder)
                    self._contexts.start(image.key, partial(self._generate_context, image, builder))
                    break

    # -- the whole lab ------------------------------------------------------------------
    async def build_images(
        self,
        images: Sequence[LabImage],
        arches: Sequence[str],
        then: Callable[[LabImage], Awaitable[None]] | None = None,
    ) -> None:
        """Build what is out of date, every step in a slot (lab/schedule.py), the longest
        chains first, and `then` each image as soon as its arches are built (publishing:
        pushes fill the slots the last long steps leave idle); then print what each step
        cost."""
        started = time.monotonic()
        jobs = sorted(((i, a) for i in images for a in arches if a in i.arches), key=lambda j: -self.chain(*j))
        try:
            await self.start_builders(images, arches)
            # each step waits for a slot by its chain's expected seconds (lab/schedule.py)
            built = {(image.key, arch): asyncio.ensure_future(self.image(image, arch)) for image, arch in jobs}
            tasks: list[asyncio.Future[Any]] = [*built.values()]
            if then is not None:

                async def when_built(image: LabImage) -> None:
                    await asyncio.gather(*(task for (key, _), task in built.items() if key == image.key))
                    await then(image)

                tasks += [asyncio.ensure_future(when_built(image)) for image in images]
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                for task in tasks:  # one failed build ends the others: the lab is not complete
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
        finally:
            await self._images.aclose()  # an image built on another awaited that one's: none runs on
            await self.drop_contexts()
        self.book.save()
        for line in cost_table(self.book.costs, time.monotonic() - started):
            self.log(line)

    async def build(
        self, arches: Sequence[str] = ARCHES, only: Sequence[str] | None = None, *, gap_rows: bool = False
    ) -> None:
        """Build and publish the images (`only`: by name or key, `gaps` for the deliberate
        gaps, `hub` for the stand-in's Debian bases); `gap_rows`: rows to run need the gaps,
        published once both arches of their source are."""
        images = [i for i in IMAGES if not only or i.name in only or i.key in only]
        asked_for_gaps = only is not None and ("gaps" in only or any(name in only for name in GAPS))
        gaps = not only or asked_for_gaps or gap_rows
        started = time.monotonic()
        registry_up(self.log)

        async def publish(image: LabImage) -> None:
            await self.publish(image, [a for a in arches if a in image.arches])

        await self.build_images(images, arches, then=publish)
        if not only or STAND_IN in only:
            await self.publish_bases(arches)
        if gaps:
            writer = RegistryWriter(f"http://{REGISTRY}")
            try:
                # a build of one arch on a cold lab (`make demo`'s first step) has no source for
                # the gaps' other arch yet: they are made by the build that brings it
                every_arch = set(ARCHES) <= set(arches)
                if asked_for_gaps or every_arch or await asyncio.to_thread(gap_sources_published, writer):
                    await asyncio.to_thread(publish_gaps, writer, self.log)
                else:
                    gaps = False
                    self.log(f"lab: the gaps wait for both arches of {SOURCE_NAME}:{SOURCE_TAG} (not built yet)")
            finally:
                writer.close()
        self.log(
            f"lab: ready in {time.monotonic() - started:.0f} s: registry {REGISTRY}, "
            f"{len(images)} image(s) for {', '.join(arches)}" + (f", {len(GAPS)} gaps" if gaps else "")
        )
