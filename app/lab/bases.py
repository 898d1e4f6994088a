"""The lab's base images: debootstrap's minbase of a Debian suite for each arch, with the
machine's own maintainer-script tools for a foreign arch (lab/native_tools.py)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tarfile
import time
from pathlib import Path

from ecoready.domain.errors import EnvironmentProblem
from ecoready.engine.platform import emulators, host_arch
from ecoready.lab import native_tools as native_layout
from ecoready.lab.core import LabCore, emulation_env, owner_labels, run_logged
from ecoready.lab.recipes import (
    BASE_PACKAGES,
    RECIPE_LABEL,
    base_tag,
    containers_dir,
    native_chroot,
    native_tool_names,
    native_tools_file,
    recipe_hash,
)

_ROOTFS_FILES = {
    "usr/sbin/policy-rc.d": ("#!/bin/sh\n# no daemons start inside image builds\nexit 101\n", 0o755),
    "etc/apt/apt.conf.d/90ecoready": ('APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n', 0o644),
    "etc/dpkg/dpkg.cfg.d/90ecoready-nodoc": (
        "path-exclude=/usr/share/doc/*\npath-exclude=/usr/share/man/*\npath-exclude=/usr/share/info/*\n",
        0o644,
    ),
}


class Bases(LabCore):
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
        archive = await self.host.images.copy_from_image(base, "/", labels=owner_labels("lab-copy-out"))
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
        env = {**os.environ, **emulation_env(arch)}  # its second stage runs the arch's programs
        if tools is not None:
            # containers/base/native-chroot stands in for chroot, in a mount namespace of its own
            shutil.copy2(shutil.which("chroot") or "/usr/sbin/chroot", work / "chroot")
            env.update(NATIVE=str(tools), REAL_CHROOT=str(work / "chroot"))
            bind = 'mount --bind "$0" /usr/sbin/chroot && exec "$@"'
            cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", bind, str(native_chroot()), *cmd]
        await run_logged(cmd, logfile, timeout=1800, what=f"debootstrap {suite} {arch}", env=env)
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


def _tar_rootfs(rootfs: Path, target: Path) -> None:
    with tarfile.open(target, "w") as tar:
        tar.add(str(rootfs), arcname=".", filter=_numeric_owner)


def _numeric_owner(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uname = info.gname = ""
    return info
