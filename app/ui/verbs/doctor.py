"""`ecoready doctor`: can this machine run the matrix? The engine, the emulators, the CPU
and disk, and whether each registry of the matrix answers (results on stdout)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ecoready.domain.errors import EcoreadyError
from ecoready.ui.args import DEFAULT_MATRIX, load_matrix
from ecoready.ui.console import say
from ecoready.ui.verbs import options

if TYPE_CHECKING:  # only for annotations: the verb imports what it uses
    from ecoready.matrix.document import Matrix


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "doctor",
        help="is the engine reachable, which emulators, which CPU",
        description="Check the environment ecoready runs in, and whether each registry of the matrix "
        "answers. Results on stdout.",
    )
    options.matrix(parser, help=f"the matrix whose registries to ask (default: {DEFAULT_MATRIX} if present)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """3 when docker is unreachable, 1 when an emulator has a problem (a registry that does
    not answer is said, and changes no code)."""
    import asyncio
    import os
    import sys

    from ecoready import __version__

    matrix = None if args.matrix is None and not Path(DEFAULT_MATRIX).is_file() else load_matrix(args)

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
                f"docker: engine {facts.docker_version}{' (Podman)' if host.podman else ''}, "
                f"API {facts.api_version}, native {facts.native_arch}, "
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
    import asyncio

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
