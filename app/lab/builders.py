"""Builders: images built once, natively, that compile for every arch what would be slow
under emulation (C, C++ and Go cross-compiled, Java bytecode) into /out; and the generated
build contexts of the images that copy a builder's /out or files of other contexts."""

from __future__ import annotations

import asyncio
import math
import shutil
import time
from pathlib import Path

from ecoready.domain.errors import EnvironmentProblem
from ecoready.engine.platform import host_arch
from ecoready.lab.bases import Bases
from ecoready.lab.core import assemble_context, extract_tar, owner_labels
from ecoready.lab.recipes import (
    RECIPE_LABEL,
    Builder,
    LabImage,
    builder_named,
    builder_tag,
    containers_dir,
    context_hash,
    files_hash,
    recipe_hash,
)

# A builder's output gates its images on every arch, the emulated ones the longest of all:
# its steps go before any other waiting step.
BUILDER_PRIORITY = math.inf


class Builders(Bases):
    def builder_recipe(self, builder: Builder) -> str:
        """Computed without building anything: the base's recipe is a pure function too."""
        return recipe_hash(
            "builder-v1",
            self.base_recipe(builder.suite, host_arch()),
            context_hash(containers_dir() / builder.context),
            repr(sorted(builder.build_args)),
            *([files_hash(builder.files)] if builder.files else []),
        )

    async def builder(self, builder: Builder) -> str:
        """The builder image for the host's arch, built when its recipe changed."""
        # the build contexts of several images (connectors, openjdk) ask for it at once
        async with self._builder_locks.setdefault(builder.name, asyncio.Lock()):
            return await self._builder(builder)

    async def _builder(self, builder: Builder) -> str:
        arch = host_arch()
        base = await self.base(builder.suite, arch, BUILDER_PRIORITY)
        recipe = self.builder_recipe(builder)
        tag = builder_tag(builder, arch)
        labels = await self.host.images.image_labels(tag)
        if labels is not None and labels.get(RECIPE_LABEL) == recipe:
            self._cost(f"builder {builder.name}", arch, None)
            return tag
        async with self.book.slot(BUILDER_PRIORITY):
            started = time.monotonic()
            self.log(f"lab: building the builder {builder.name} ({arch}, native)")
            logfile = self._logfile(f"{builder.name}-{arch}")
            buildargs = {"BASE": base, **dict(builder.build_args)}
            context = containers_dir() / builder.context
            if builder.files:  # its context with the files it copies in (the smoke programs' sources)
                context = self.lab_dir / "work" / f"context-{builder.name}"
                await asyncio.to_thread(assemble_context, containers_dir() / builder.context, context, builder.files)
            try:
                await self._build(context, tag, arch, buildargs, recipe, logfile)
            finally:
                if builder.files:
                    await asyncio.to_thread(shutil.rmtree, context, True)
        self.log(f"lab: builder {builder.name} built in {time.monotonic() - started:.0f} s")
        self._cost(f"builder {builder.name}", arch, started)
        return tag

    async def build_context(self, image: LabImage) -> Path:
        """The context to build `image` from: containers/<context> plus out/ from its builder
        and the files it copies from other contexts (made once per lab run, shared by the
        arch tracks)."""
        if image.builder is None and not image.files:
            return containers_dir() / image.context
        builder = builder_named(image.builder) if image.builder is not None else None
        return await self._contexts.ask(image.key, lambda: self._generate_context(image, builder))

    async def _generate_context(self, image: LabImage, builder: Builder | None) -> Path:
        archive = b""
        if builder is not None:
            tag = await self.builder(builder)
            archive = await self.host.images.copy_from_image(tag, builder.output, labels=owner_labels("lab-copy-out"))
        source = containers_dir() / image.context
        target = self.lab_dir / "work" / f"context-{image.name}-{image.tag}"
        nested = (containers_dir() / builder.context).resolve() if builder is not None else None

        def skip_builder(directory: str, names: list[str]) -> list[str]:
            return [n for n in names if (Path(directory) / n).resolve() == nested]

        def assemble() -> None:
            assemble_context(source, target, image.files, ignore=skip_builder)
            if builder is not None:
                if (target / "out").exists():
                    raise EnvironmentProblem(f"{source}/out exists: out/ is reserved for the builder's output")
                extract_tar(archive, target)

        await asyncio.to_thread(assemble)
        if builder is not None:
            self.log(f"lab: {builder.name}'s {builder.output} ({len(archive) / 2**20:.1f} MiB) copied into {target}")
        return target

    async def drop_contexts(self) -> None:
        """Remove the generated build contexts and tool layouts (made again when needed)."""
        made = [*self._contexts.kept(), *self._native.kept()]
        await self._contexts.aclose()  # those under way stopped, the rest forgotten
        await self._native.aclose()
        for path in made:
            await asyncio.to_thread(shutil.rmtree, path, True)
