"""The operational verbs: `cleanup` (what ecoready left on engines), `doctor` (can this
machine run the matrix?) and `lab build|up|down|status` (the offline lab)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ecoready import __version__
from ecoready.domain.errors import EcoreadyError
from ecoready.domain.model import Host
from ecoready.matrix.document import Matrix
from ecoready.ui.console import eprint, say


def cleanup(hosts: Sequence[Host], *, everything: bool, per_host: bool) -> int:
    """Remove resources of dead runs (all of them with `everything`) on each engine; 3 when
    an engine could not be reached. `per_host`: say which host each line is about."""

    async def work() -> int:
        from ecoready.run.hosts import connect_all

        engines = await connect_all(hosts)
        code, removed = 0, 0
        try:
            for engine in engines:
                where = f" on host {engine.spec.name}" if per_host else ""
                if engine.host is None:
                    eprint(f"ecoready: error: {f'host {engine.spec.name}: ' if per_host else ''}{engine.error}")
                    code = 3
                    continue
                try:
                    swept = await engine.host.sweep(dead_owners=True, everything=everything)
                except EcoreadyError as exc:
                    eprint(f"ecoready: error: host {engine.spec.name}: {exc}")
                    code = 3
                    continue
                removed += swept.total
                kinds = (("container", swept.containers), ("network", swept.networks), ("volume", swept.volumes))
                for kind, names in kinds:
                    for name in names:
                        eprint(f"removed {kind} {name}{where}")
        finally:
            for engine in engines:
                if engine.host is not None:
                    await engine.host.close()
        if not removed and code == 0:
            eprint("ecoready: nothing to clean up")
        return code

    return asyncio.run(work())


def doctor(matrix: Matrix | None = None) -> int:
    """The engine, the emulators, this machine's CPU and disk, and whether each registry of
    the matrix answers (results on stdout); 3 when docker is unreachable, 1 when an emulator
    has a problem (a registry that does not answer is said, and changes no code)."""

    async def work() -> int:
        from ecoready.engine.docker_host import DockerHost
        from ecoready.engine.platform import cpu_model, emulators, host_arch, page_size

        problems = 0
        say(f"ecoready {__version__}, python {sys.version.split()[0]}")
        say(f"host: {host_arch()} ({cpu_model() or 'unknown CPU'}), {os.cpu_count()} CPUs, page size {page_size()}")
        found = emulators()
        for arch, emulator in sorted(found.items()):
            problem = emulator.problem()
            state = "ok" if problem is None else f"PROBLEM: {problem}"
            say(f"emulator {arch}: {emulator.version or emulator.interpreter} flags {emulator.flags or '-'}: {state}")
            problems += problem is not None
        if not found:
            say("emulators: none registered (only the native arch can run; `make setup` registers qemu-aarch64)")
        if matrix is not None:
            for line in await registry_answers(matrix):
                say(line)
        try:
            host = await DockerHost.connect()
        except EcoreadyError as exc:
            say(f"docker: {exc}")
            return 3
        try:
            facts = await host.facts({})
            say(
                f"docker: engine {facts.docker_version}, API {facts.api_version}, native {facts.native_arch}, "
                f"{facts.cpus} CPUs, {facts.memory_bytes / 2**30:.1f} GiB"
            )
        finally:
            await host.close()
        usage = os.statvfs("/var/lib/docker" if Path("/var/lib/docker").exists() else "/")
        say(f"disk: {usage.f_bavail * usage.f_frsize / 2**30:.1f} GiB free for docker")
        return 1 if problems else 0

    return asyncio.run(work())


async def registry_answers(matrix: Matrix) -> list[str]:
    """`registry docker.io: answers` or `registry docker.io: does not answer: …`, one line per
    registry of the matrix (asked for its first image there, for this machine's arch)."""
    from ecoready.domain.model import Verdict
    from ecoready.engine.platform import host_arch
    from ecoready.registry.client import RegistryClient
    from ecoready.registry.manifests import parse_reference

    firsts: dict[str, str] = {}
    for component in matrix.components:
        try:
            firsts.setdefault(parse_reference(component.image).registry, component.image)
        except EcoreadyError:
            continue  # validate says what is wrong with it
    mirror = f" (through the mirror {matrix.registry.mirror})" if matrix.registry.mirror else ""
    async with RegistryClient(
        mirror=matrix.registry.mirror, insecure=matrix.registry.insecure, wait_budget=matrix.registry.rate_limit_wait
    ) as client:
        found = await asyncio.gather(
            *(client.resolve(image, host_arch()) for image in firsts.values()), return_exceptions=True
        )
    lines = []
    for (registry, image), answer in zip(firsts.items(), found, strict=True):
        if isinstance(answer, BaseException):
            if not isinstance(answer, EcoreadyError):
                raise answer
            lines.append(f"registry {registry}{mirror}: does not answer: {str(answer).removeprefix(registry + ': ')}")
        elif answer.verdict is Verdict.ERROR:
            lines.append(f"registry {registry}{mirror}: does not answer: {answer.detail}")
        else:
            lines.append(f"registry {registry}{mirror}: answers (asked for {image})")
    if not firsts:
        lines.append(f"registries: {matrix.path} names no image")
    return lines


def lab_build(arches: Sequence[str] | None, only: Sequence[str] | None) -> int:
    async def work() -> int:
        from ecoready.engine.docker_host import DockerHost
        from ecoready.lab.build import Lab
        from ecoready.lab.recipes import ARCHES

        host = await DockerHost.connect()
        try:
            await Lab(host, eprint).build(arches=arches or ARCHES, only=only)
        finally:
            await host.close()
        return 0

    return asyncio.run(work())


def lab_up() -> int:
    from ecoready.lab.local_registry import registry_up
    from ecoready.lab.recipes import REGISTRY

    registry_up(eprint)
    eprint(f"lab: registry up on {REGISTRY}")
    return 0


def lab_down() -> int:
    from ecoready.lab.local_registry import registry_down

    if not registry_down(eprint):
        eprint("lab: registry was not running")
    return 0


def lab_status() -> int:
    async def work() -> int:
        from ecoready.engine.docker_host import DockerHost
        from ecoready.lab.status import status_lines

        host = await DockerHost.connect()
        try:
            lines, ok = await status_lines(host)
        finally:
            await host.close()
        for line in lines:
            print(line)
        return 0 if ok else 1

    return asyncio.run(work())
