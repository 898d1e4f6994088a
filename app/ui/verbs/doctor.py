"""`ecoready doctor`: can this machine run the matrix? The engine, the emulators, the CPU
and disk, and whether each registry of the matrix answers (results on stdout)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ecoready.domain.errors import EcoreadyError, LoginRequired, MirrorGap
from ecoready.ui.args import DEFAULT_MATRIX, load_matrix
from ecoready.ui.console import say
from ecoready.ui.verbs import options

if TYPE_CHECKING:  # only for annotations: the verb imports what it uses
    from ecoready.engine.identity import EngineIdentity
    from ecoready.matrix.document import Matrix


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "doctor",
        help="which engine, how it was found, what it runs, which CPU; exit 3 when a run could not start",
        description="Check the environment ecoready runs in: which engine it finds and how, the engine's "
        "CPU, memory and disk, which arches it can emulate, and whether each registry of the matrix answers. "
        "Results on stdout, then one summary line. Exit 3 when something would stop a run (the engine "
        "unreachable, the emulator of a wanted arch broken, a registry of the matrix that does not answer), "
        "else 0.",
    )
    options.matrix(
        parser,
        help=f"the matrix whose registries to ask (default: as `run`: {DEFAULT_MATRIX} if present, "
        "else the default matrix shipped with ecoready)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Ends with one summary line. 3 (an environment error, docs/usage.md) when something would
    stop a run: the engine unreachable, a wanted arch's emulator broken, a registry of the
    matrix that does not answer; else 0 (what only might be a problem is said, as a warning)."""
    import asyncio
    import os
    import sys

    from ecoready import __version__

    # the matrix `run` would use here: --matrix, ./matrix.toml, else the shipped default
    # (so `doctor` never says "ready" where `run` fails on the default matrix's registries)
    matrix = load_matrix(args)
    wanted = matrix.arches
    blockers: list[str] = []
    warnings: list[str] = []

    async def work() -> None:
        from ecoready.engine.docker_host import DockerHost
        from ecoready.engine.platform import cpu_model, host_arch, page_size

        say(f"ecoready {__version__}, python {sys.version.split()[0]}")
        say(
            f"client (where ecoready runs): {host_arch()} ({cpu_model() or 'unknown CPU'}), "
            f"{os.cpu_count()} CPUs, page size {page_size()}"
        )
        say(f"client CPU: {this_cpu()}")
        for line, registry in await registry_check(matrix):
            say(line)
            if registry:
                blockers.append(f"registry {registry} does not answer")
        try:
            host = await DockerHost.connect()
        except EcoreadyError as exc:
            say(f"engine: {exc}")
            blockers.append("the engine is unreachable")
            return
        try:
            facts = host.facts({})
        finally:
            await host.close()
        identity = host.identity
        say(f"engine: {identity.said()}")
        where = "this machine's kernel" if identity.same_kernel else "another kernel (a VM or another machine)"
        say(
            f"engine: native {facts.native_arch}, {facts.cpus} CPUs, {facts.memory_bytes / 2**30:.1f} GiB, "
            f"kernel {facts.kernel or 'unknown'} ({where}), API {facts.api_version}"
        )
        say(engine_disk(identity.root_dir, same_kernel=identity.same_kernel))
        say(engine_cpu(same_kernel=identity.same_kernel))
        for arch, line, state in emulation_states(identity, facts.native_arch):
            say(line)
            if state == PROBLEM:
                (blockers if arch in wanted else warnings).append(f"the emulator of {arch} is broken")
            elif state == UNKNOWN and arch in wanted:
                warnings.append(f"{arch} under emulation is not known yet")

    asyncio.run(work())
    say(summary(blockers, warnings, matrix.path))
    return 3 if blockers else 0


OK, PROBLEM, UNKNOWN = "ok", "problem", "unknown"


def summary(blockers: list[str], warnings: list[str], matrix: str | None) -> str:
    """The last line: whether a run can start, and what would stop it."""
    of = f" {matrix}" if matrix else ""
    also = f" ({len(warnings)} warning{'s' if len(warnings) != 1 else ''}: {'; '.join(warnings)})" if warnings else ""
    if blockers:
        return f"doctor: NOT READY to run{of}: {'; '.join(blockers)}{also}"
    return f"doctor: ready to run{of}{also}"


def engine_disk(root: str, *, same_kernel: bool) -> str:
    """The free space where the engine keeps images and containers, when it can be read here."""
    import os

    if same_kernel and root and hasattr(os, "statvfs"):
        try:
            usage = os.statvfs(root)
        except OSError:
            pass
        else:
            return f"engine disk: {usage.f_bavail * usage.f_frsize / 2**30:.1f} GiB free in {root}"
    return "engine disk: not readable from here (the engine's disk is in its VM or on its machine: see its settings)"


CPUINFO = "/proc/cpuinfo"
MIDR = "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1"


def this_cpu(cpuinfo: str = CPUINFO, midr: str = MIDR) -> str:
    """This kernel's CPU named by its part (MIDR on arm64, family/model on x86), its flags
    only when the part is not one of the target file's."""
    from pathlib import Path

    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"not readable ({cpuinfo}: {exc.strerror})"
    try:
        register = Path(midr).read_text(encoding="ascii", errors="replace")
    except OSError:
        register = ""
    return cpu_said(text, register)


def cpu_said(cpuinfo: str, midr_el1: str = "") -> str:
    """ "this host: Neoverse N1, AWS Graviton2 / Ampere Altra class (MIDR 0x41:0xd0c)"; by its
    flags when its part is unknown ("part 0x41:0xd99, not in ecoready's target CPUs; by its
    flags: LSE, CRC32")."""
    from ecoready.report.targets import cpu_named
    from ecoready.run.fitness import AMD64_FEATURES, ARM64_FEATURES, parse_cpuinfo, x86_level_from_flags

    cpu = parse_cpuinfo(cpuinfo)
    part = cpu.cpu_part or midr_part(midr_el1)
    kind = "MIDR" if part.count(":") == 1 else "family/model"
    named = cpu_named(part)
    if named:
        return f"this host: {named} ({kind} {part})"
    if "sse2" in cpu.flags:
        flags = f"{x86_level_from_flags(cpu.flags)}, " + ", ".join(
            n for k, n in AMD64_FEATURES.items() if k in cpu.flags
        )
    else:
        flags = ", ".join(n.upper() for k, n in ARM64_FEATURES.items() if k in cpu.flags) or "none readable"
    which = f"part {part}, not one of ecoready's target CPUs" if part else "no part given by the kernel"
    return f"this host: {cpu.model or 'unknown CPU'} ({which}; by its flags: {flags})"


def midr_part(register: str) -> str:
    """ "0x41:0xd0c" from MIDR_EL1 as sysfs prints it ("0x00000000413fd0c1")."""
    try:
        value = int(register.strip(), 16)
    except ValueError:
        return ""
    return f"{value >> 24 & 0xFF:#04x}:{value >> 4 & 0xFFF:#05x}"


def engine_cpu(*, same_kernel: bool) -> str:
    """The engine's CPU: read here when the engine runs on this kernel; else a run's platform
    survey reads it inside a container (the report's platform fitness names it)."""
    if same_kernel:
        return f"engine CPU: {this_cpu()}"
    return (
        "engine CPU: on another kernel (a VM or another machine): a run's platform survey names it "
        "by its part, in the report's platform fitness"
    )


def emulation_states(identity: EngineIdentity, native: str) -> list[tuple[str, str, str]]:
    """(arch, line, state) per foreign arch: the binfmt table of the engine's kernel when it
    is this one, else what the engine answered before (run/emulation.py)."""
    from ecoready.engine.platform import emulators
    from ecoready.run.emulation import EngineMemory, remedy

    table = emulators() if identity.same_kernel else {}
    memory = EngineMemory()
    lines: list[tuple[str, str, str]] = []
    for arch in (a for a in dict.fromkeys(("amd64", "arm64", *table)) if a != native):
        emulator = table.get(arch)
        remembered = memory.known(identity.engine_id, arch)
        if emulator is not None:
            problem = emulator.problem()
            said = f"{emulator.version or emulator.interpreter}, flags {emulator.flags or '-'}"
            if problem is None:
                lines.append((arch, f"emulation {arch}: {said}: ok", OK))
            else:
                lines.append(
                    (arch, f"emulation {arch}: {said}: PROBLEM: {problem}; {remedy(identity.kind, arch)}", PROBLEM)
                )
        elif remembered is not None:
            lines.append((arch, f"emulation {arch}: the engine ran a container of {arch} in an earlier run: ok", OK))
        else:
            lines.append(
                (
                    arch,
                    f"emulation {arch}: not known yet (a run asks the engine with a container of {arch}); "
                    f"to run {arch}: {remedy(identity.kind, arch)}",
                    UNKNOWN,
                )
            )
    return lines


async def registry_answers(matrix: Matrix) -> list[str]:
    """`registry docker.io: answers` or `registry docker.io: does not answer: …`, one line per
    registry of the matrix (asked for its first image there, for this machine's arch)."""
    return [line for line, _ in await registry_check(matrix)]


async def registry_check(matrix: Matrix) -> list[tuple[str, str]]:
    """(line, the registry when it does not answer, else "") per registry of the matrix."""
    import asyncio

    from ecoready.domain.images import Verdict
    from ecoready.engine.platform import host_arch
    from ecoready.registry.client import RegistryClient
    from ecoready.registry.manifests import parse_reference

    firsts: dict[str, str] = {}
    for component in matrix.components:
        try:
            firsts.setdefault(parse_reference(component.image).registry, component.image)
        except EcoreadyError:
            continue  # validate says what is wrong with it
    async with RegistryClient.for_settings(matrix.registry) as client:
        found = await asyncio.gather(
            *(client.resolve(image, host_arch()) for image in firsts.values()), return_exceptions=True
        )
    lines: list[tuple[str, str]] = []
    for (registry, image), answer in zip(firsts.items(), found, strict=True):
        on = client.mirror_for(registry)
        mirror = f" (through the {on.style} mirror {on.name})" if on else ""
        if isinstance(answer, BaseException):
            if not isinstance(answer, EcoreadyError):
                raise answer
            if isinstance(answer, MirrorGap):  # the mirror's trouble, said as the mirror's
                lines.append((f"registry {registry}{mirror}: not served: {answer}", registry))
                continue
            why = answer.detail if answer.subject == registry else str(answer)  # its name said once
            if isinstance(answer, LoginRequired):  # it answered: that image is locked, a login to give
                lines.append((f"registry {registry}{mirror}: answers; {image} is locked: {why}", ""))
                continue
            lines.append((f"registry {registry}{mirror}: does not answer: {why}", registry))
        elif answer.verdict is Verdict.ERROR:
            lines.append((f"registry {registry}{mirror}: does not answer: {answer.detail}", registry))
        else:
            lines.append((f"registry {registry}{mirror}: answers (asked for {image})", ""))
    if not firsts:
        lines.append((f"registries: {matrix.path} names no image", ""))
    return lines
