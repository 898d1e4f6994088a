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
import io
import math
import os
import shutil
import signal
import subprocess
import tarfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ecoready.domain.errors import EngineError, EnvironmentProblem
from ecoready.domain.flight import Flights
from ecoready.domain.specs import LABEL_OWNER, LABEL_OWNER_START, LABEL_ROLE, LABEL_RUN
from ecoready.engine.aio import together
from ecoready.engine.docker_host import DockerHost
from ecoready.engine.owners import this_owner
from ecoready.engine.platform import emulated_cpu_env, emulators, host_arch
from ecoready.lab import native_tools as native_layout
from ecoready.lab.gaps import GAPS, SOURCE_NAME, SOURCE_TAG, gap_sources_published, publish_gaps
from ecoready.lab.local_registry import registry_up
from ecoready.lab.oci_writer import IndexEntry, RegistryWriter
from ecoready.lab.recipes import (
    ARCHES,
    BASE_PACKAGES,
    BUILD_TIMEOUT,
    IMAGES,
    LAB_DIR,
    RECIPE_LABEL,
    REGISTRY,
    STAND_IN,
    STAND_IN_BASES,
    Builder,
    LabImage,
    apt_into,
    base_tag,
    builder_named,
    builder_tag,
    containers_dir,
    context_hash,
    debian_mirror,
    files_hash,
    image_named,
    image_tag,
    native_chroot,
    native_tool_names,
    native_tools_file,
    recipe_hash,
    source_path,
    stand_in_repository,
)
from ecoready.lab.schedule import BuildBook, StepCost, build_slots, cost_table

Log = Callable[[str], None]

# A builder's output gates its images on every arch, the emulated ones the longest of all:
# its steps go before any other waiting step.
BUILDER_PRIORITY = math.inf


# Written into every rootfs: no services start during builds, no recommends, no docs.
_ROOTFS_FILES = {
    "usr/sbin/policy-rc.d": ("#!/bin/sh\n# no daemons start inside image builds\nexit 101\n", 0o755),
    "etc/apt/apt.conf.d/90ecoready": ('APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n', 0o644),
    "etc/dpkg/dpkg.cfg.d/90ecoready-nodoc": (
        "path-exclude=/usr/share/doc/*\npath-exclude=/usr/share/man/*\npath-exclude=/usr/share/info/*\n",
        0o644,
    ),
}


@dataclass
class Lab:
    host: DockerHost
    log: Log
    mirror: str = field(default_factory=debian_mirror)
    lab_dir: Path = LAB_DIR
    # generated build contexts, one per image: both arch tracks await the same one
    _contexts: Flights[str, Path] = field(default_factory=Flights.memo, init=False, repr=False)
    _base_locks: dict[tuple[str, str], asyncio.Lock] = field(default_factory=dict, init=False, repr=False)
    _builder_locks: dict[str, asyncio.Lock] = field(default_factory=dict, init=False, repr=False)
    # the machine's own tools per suite (lab/native_tools.py), laid out once per build
    _native: Flights[str, Path] = field(default_factory=Flights.memo, init=False, repr=False)
    # the component images of this build (their tags), one per image and arch
    _images: Flights[tuple[str, str], str] = field(default_factory=Flights.memo, init=False, repr=False)
    book: BuildBook = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.book = BuildBook(self.lab_dir, build_slots())

    def _cost(self, step: str, arch: str, started: float | None) -> None:
        """Record a step: `started` None when its image was current."""
        seconds = time.monotonic() - started if started is not None else 0.0
        self.book.record(StepCost(step, arch, seconds, arch != host_arch(), started is not None))

    # -- base images --------------------------------------------------------------------
    def base_recipe(self, suite: str, arch: str) -> str:
        dockerfile = (containers_dir() / "base" / "Dockerfile").read_bytes()
        files = "".join(f"{k}{v}" for k, v in sorted(_ROOTFS_FILES.items()))
        include = [",".join(BASE_PACKAGES[suite])] if suite in BASE_PACKAGES else []
        native = [native_chroot().read_bytes(), native_tools_file().read_bytes()] if arch != host_arch() else []
        return recipe_hash("base-v1", suite, arch, self.mirror, "minbase", *include, dockerfile, files, *native)

    async def base(self, suite: str, arch: str, priority: float = 0.0) -> str:
        """The base image; `priority`: the chain of the step that asks (lab/schedule.py)."""
        # a builder started early and an image of the same arch may ask for it at once
        async with self._base_locks.setdefault((suite, arch), asyncio.Lock()):
            return await self._base(suite, arch, priority)

    async def _base(self, suite: str, arch: str, priority: float) -> str:
        tag = base_tag(suite, arch)
        recipe = self.base_recipe(suite, arch)
        labels = await self.host.images.image_labels(tag)
        if labels is not None and labels.get(RECIPE_LABEL) == recipe:
            self._cost(f"base {suite}", arch, None)
            return tag
        self._need_emulator(arch)
        # a foreign base's maintainer scripts run the machine's own base's tools: asked for
        # before the slot, which its own build may need
        tools = await self.native_tools(suite, priority) if arch != host_arch() else None
        async with self.book.slot(priority):
            return await self._debootstrap(suite, arch, tag, recipe, tools)

    async def native_tools(self, suite: str, priority: float = 0.0) -> Path | None:
        """The machine's own maintainer-script tools of `suite`, laid out as a root
        (lab/native_tools.py), once per build; None when ECOREADY_LAB_NATIVE_TOOLS=0 (every
        process of a foreign arch's scripts then runs emulated)."""
        if os.environ.get("ECOREADY_LAB_NATIVE_TOOLS", "1") == "0":
            return None
        return await self._native.ask(suite, lambda: self._lay_out_native_tools(suite, priority))

    async def _lay_out_native_tools(self, suite: str, priority: float) -> Path:
        base = await self.base(suite, host_arch(), priority)
        archive = await self.host.images.copy_from_image(base, "/", labels=_owner_labels("lab-copy-out"))
        dest = self.lab_dir / "work" / f"native-{suite}"

        def lay_out() -> None:
            shutil.rmtree(dest, ignore_errors=True)
            native_layout.lay_out(archive, dest, native_tool_names())

        await asyncio.to_thread(lay_out)
        return dest

    async def _debootstrap(self, suite: str, arch: str, tag: str, recipe: str, tools: Path | None) -> str:
        started = time.monotonic()
        self.log(f"lab: debootstrap {suite} for {arch} (about {'90' if arch != host_arch() else '30'} s)")
        work = self.lab_dir / "work" / f"base-{suite}-{arch}"
        rootfs = work / "rootfs"
        shutil.rmtree(work, ignore_errors=True)
        rootfs.mkdir(parents=True)
        logfile = self._logfile(f"base-{suite}-{arch}")
        include = [f"--include={','.join(BASE_PACKAGES[suite])}"] if suite in BASE_PACKAGES else []
        cmd = ["debootstrap", "--variant=minbase", f"--arch={arch}", *include, suite, str(rootfs), self.mirror]
        env = {**os.environ, **_emulation_env(arch)}  # its second stage runs the arch's programs
        if tools is not None:
            # containers/base/native-chroot stands in for chroot, in a mount namespace of its own
            shutil.copy2(shutil.which("chroot") or "/usr/sbin/chroot", work / "chroot")
            env.update(NATIVE=str(tools), REAL_CHROOT=str(work / "chroot"))
            bind = 'mount --bind "$0" /usr/sbin/chroot && exec "$@"'
            cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", bind, str(native_chroot()), *cmd]
        await _run_logged(cmd, logfile, timeout=1800, what=f"debootstrap {suite} {arch}", env=env)
        if tools is not None:
            native_layout.remove(rootfs)
        for rel, (content, mode) in _ROOTFS_FILES.items():
            target = rootfs / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
            target.chmod(mode)
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for item in (rootfs / junk).glob("*"):
                if item.is_file():
                    item.unlink()
        await asyncio.to_thread(_tar_rootfs, rootfs, work / "rootfs.tar")
        shutil.rmtree(rootfs)
        shutil.copy(containers_dir() / "base" / "Dockerfile", work / "Dockerfile")
        await self._build(work, tag, arch, {}, recipe, logfile)
        shutil.rmtree(work, ignore_errors=True)
        self.log(f"lab: base {suite}/{arch} built in {time.monotonic() - started:.0f} s")
        self._cost(f"base {suite}", arch, started)
        return tag

    def _need_emulator(self, arch: str) -> None:
        if arch == host_arch():
            return
        emulator = emulators().get(arch)
        if emulator is None:
            raise EnvironmentProblem(
                f"no emulator for {arch} is registered: register qemu-user >= 8 for it "
                "(scripts/setup-host.sh in the ecoready checkout does, as root)"
            )
        problem = emulator.problem()
        if problem:
            raise EnvironmentProblem(
                f"{problem}: register qemu-user >= 8 (scripts/setup-host.sh in the ecoready checkout does, as root)"
            )

    # -- component images ------------------------------------------------------------
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
        buildargs = {"BASE": base, **({"ARCH": arch} if image.builder is not None else {}), **_emulation_env(arch)}
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
        archive = await self.host.images.copy_from_image(base, "/", labels=_owner_labels("lab-copy-out"))

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
            **_emulation_env(arch),  # the maintainer scripts' own programs run emulated
        }
        exit_code = await self.host.images.run_to_end(
            native,
            ["sh", "/work/apt-into"],
            env=env,
            # maintainer scripts run chrooted in /target; some need a /proc (java's)
            binds=binds,
            labels=_owner_labels("lab-install"),
            log=_appender(logfile),
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

    # -- builders: artifacts compiled natively for every arch --------------------------
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
                await asyncio.to_thread(_assemble, containers_dir() / builder.context, context, builder.files)
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

    async def _generate_context(self, image: LabImage, builder: Builder | None) -> Path:
        archive = b""
        if builder is not None:
            tag = await self.builder(builder)
            archive = await self.host.images.copy_from_image(tag, builder.output, labels=_owner_labels("lab-copy-out"))
        source = containers_dir() / image.context
        target = self.lab_dir / "work" / f"context-{image.name}-{image.tag}"
        nested = (containers_dir() / builder.context).resolve() if builder is not None else None

        def skip_builder(directory: str, names: list[str]) -> list[str]:
            return [n for n in names if (Path(directory) / n).resolve() == nested]

        def assemble() -> None:
            _assemble(source, target, image.files, ignore=skip_builder)
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

    async def _build(
        self, context: Path, tag: str, arch: str, buildargs: dict[str, str], recipe: str, logfile: Path
    ) -> None:
        """`docker build` for the arch, labelled with its recipe, its output in `logfile`
        (whose tail is shown when it fails)."""
        try:
            await self.host.images.build(
                str(context),
                tag,
                f"linux/{arch}",
                buildargs=buildargs,
                labels={RECIPE_LABEL: recipe},
                log=_appender(logfile),
                timeout=BUILD_TIMEOUT[arch],
            )
        except Exception:
            self._log_tail(logfile)
            raise

    def _log_tail(self, logfile: Path) -> None:
        tail = logfile.read_text(errors="replace").splitlines()[-15:] if logfile.exists() else []
        self.log("\n".join(f"lab:   | {line}" for line in tail))

    def _logfile(self, name: str) -> Path:
        path = self.lab_dir / "logs" / f"{name}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        return path

    # -- publishing ---------------------------------------------------------------------
    async def publish(self, image: LabImage, arches: Sequence[str]) -> None:
        """Per-arch repositories <arch>/<name>:<tag>, then the index lab/<name>:<tag>."""
        writer = RegistryWriter(f"http://{REGISTRY}")

        async def push(arch: str) -> tuple[str, str]:
            local = image_tag(image, arch)
            repo = f"{REGISTRY}/{arch}/{image.name}"
            image_id = await self._image_id(local)
            current = await asyncio.to_thread(writer.manifest, f"{arch}/{image.name}", image.tag)
            if current is None or current.json.get("config", {}).get("digest") != image_id:
                # in a build slot, after the steps waiting for one: the engine gzips the
                # layers on a core, which the builds of the images still to come share
                async with self.book.slot():
                    self.log(f"lab: pushing {arch}/{image.key}")
                    await self.host.images.tag(local, repo, image.tag)
                    await self.host.images.push(repo, image.tag)
            return arch, f"{arch}/{image.name}"

        def write_indexes(entries: list[tuple[str, str]]) -> None:
            # a build for some arches only (`--arch`) keeps the others the index points at
            for arch in (a for a in image.arches if a not in arches):
                if writer.manifest(f"{arch}/{image.name}", image.tag) is not None:
                    entries.append((arch, f"{arch}/{image.name}"))
            entries.sort(key=lambda entry: image.arches.index(entry[0]))
            names = [(f"lab/{name}", tag) for name, tag in ((image.name, image.tag), *image.aliases)]
            names += [(stand_in_repository(repo), tag) for repo, tag in image.upstream]  # the stand-ins
            for repo, tag in names:
                index = [
                    IndexEntry(
                        writer.copy_manifest(source, image.tag, repo),
                        "linux",
                        arch,
                        "v8" if arch == "arm64" else None,
                    )
                    for arch, source in entries
                ]
                writer.put_index(repo, tag, index)

        try:
            # the arches at once (a slot each): the engine gzips a layer on one core, and the
            # arches' images share no base layer (a failed push cancels the other)
            entries = await together(*(push(arch) for arch in arches))
            await asyncio.to_thread(write_indexes, entries)
        finally:
            writer.close()

    async def publish_bases(self, arches: Sequence[str]) -> None:
        """The Debian bases as the stand-in's `debian:<suite>-slim` (per-arch repositories
        <arch>/debian, then the index hub/library/debian), for the tool images derived from
        them (the bench stage's sysbench)."""
        writer = RegistryWriter(f"http://{REGISTRY}")
        try:
            for suite in STAND_IN_BASES:
                tag = f"{suite}-slim"
                entries = []
                for arch in arches:
                    local = await self.base(suite, arch)
                    image_id = await self.host.images.image_id(local)
                    current = await asyncio.to_thread(writer.manifest, f"{arch}/debian", tag)
                    if current is None or current.json.get("config", {}).get("digest") != image_id:
                        async with self.book.slot():
                            self.log(f"lab: pushing {arch}/debian:{tag}")
                            await self.host.images.tag(local, f"{REGISTRY}/{arch}/debian", tag)
                            await self.host.images.push(f"{REGISTRY}/{arch}/debian", tag)
                    entries.append((arch, f"{arch}/debian"))

                def write_index(entries: list[tuple[str, str]] = entries, tag: str = tag) -> None:
                    repo = f"{STAND_IN}/library/debian"
                    index = [
                        IndexEntry(
                            writer.copy_manifest(source, tag, repo), "linux", arch, "v8" if arch == "arm64" else None
                        )
                        for arch, source in entries
                    ]
                    writer.put_index(repo, tag, index)

                await asyncio.to_thread(write_index)
        finally:
            writer.close()

    async def _image_id(self, reference: str) -> str:
        labels = await self.host.images.image_labels(reference)
        if labels is None:
            raise EnvironmentProblem(f"{reference} is not built: run `ecoready lab build`")
        return await self.host.images.image_id(reference)

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

    async def build(self, arches: Sequence[str] = ARCHES, only: Sequence[str] | None = None) -> None:
        """Build and publish the images (`only`: by name, or `gaps` for the deliberate gaps)."""
        images = [i for i in IMAGES if not only or i.name in only or i.key in only]
        asked_for_gaps = only is not None and ("gaps" in only or any(name in only for name in GAPS))
        gaps = not only or asked_for_gaps
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


def _owner_labels(role: str) -> dict[str, str]:
    """Labels of the lab's own containers, like a run's: if we die before removing one, a
    sweep of dead owners (`ecoready cleanup`) finds it."""
    owner = this_owner()
    return {
        LABEL_RUN: f"lab-{uuid.uuid4().hex[:12]}",
        LABEL_OWNER: f"{owner.hostname}:{owner.pid}",
        LABEL_OWNER_START: owner.start,
        LABEL_ROLE: role,
    }


def _tar_rootfs(rootfs: Path, target: Path) -> None:
    with tarfile.open(target, "w") as tar:
        tar.add(str(rootfs), arcname=".", filter=_numeric_owner)


def extract_tar(archive: bytes, target: Path) -> None:
    """Unpack a tar of regular files and directories under `target`; refuse anything else
    (links, devices, absolute paths, `..`), whatever the Python version's own filters do."""
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        members = tar.getmembers()
        for member in members:
            parts = Path(member.name).parts
            if not (member.isfile() or member.isdir()) or member.name.startswith("/") or ".." in parts:
                raise EnvironmentProblem(f"refusing to unpack {member.name!r} from a builder's output")
            member.mode &= 0o755
        for member in members:
            dest = target.joinpath(*Path(member.name).parts)
            if member.isdir():
                dest.mkdir(parents=True, exist_ok=True)
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            if source is None:
                raise EnvironmentProblem(f"unreadable {member.name!r} in a builder's output")
            dest.write_bytes(source.read())
            dest.chmod(member.mode)


def _numeric_owner(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uname = info.gname = ""
    return info


def _appender(path: Path) -> Log:
    def write(text: str) -> None:
        with path.open("a", errors="replace") as handle:
            handle.write(text)

    return write


def _emulation_env(arch: str) -> dict[str, str]:
    """The CPU a foreign arch's programs are emulated as (engine/platform.EMULATED_CPU): it
    changes how fast a step runs, not what it makes, so it is not part of any recipe."""
    return emulated_cpu_env(arch) if arch != host_arch() else {}


async def _run_logged(
    cmd: Sequence[str], logfile: Path, *, timeout: float, what: str, env: dict[str, str] | None = None
) -> None:
    with logfile.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env
        )
        try:
            async with asyncio.timeout(timeout):
                code = await proc.wait()
        except (TimeoutError, asyncio.CancelledError):
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            raise
    if code != 0:
        tail = logfile.read_text(errors="replace").splitlines()[-5:]
        raise EnvironmentProblem(f"{what} failed (exit {code}): {' | '.join(tail)[-300:]}; log: {logfile}")


def _assemble(
    source: Path,
    target: Path,
    files: tuple[tuple[str, str], ...],
    ignore: Callable[[str, list[str]], list[str]] | None = None,
) -> None:
    """`target` made a copy of the context `source` plus the files it copies in (each a
    path under containers/, which may lead out of it, e.g. to the smoke programs)."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, ignore=ignore)
    for path, name in files:
        if (target / name).exists():
            raise EnvironmentProblem(f"{source}/{name} exists: it is copied in from containers/{path}")
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_path(path), target / name)
