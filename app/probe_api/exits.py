"""Why a container stopped, in one line that names the known emulation hazards (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from ecoready.domain.blame import Cause
from ecoready.domain.errors import EmulatorTooOld, LicenceRequired, StageFailed
from ecoready.domain.specs import ContainerState
from ecoready.domain.text import one_line
from ecoready.engine.platform import WIDEST_CPU
from ecoready.probe_api.licences import licence_refusal

GLIBC_CPU_MARKER = "CPU does not support x86-64-v"
EMULATOR_UPGRADE = "register qemu-user >= 8 for this arch (e.g. tonistiigi/binfmt)"
EMULATOR_FIX = f"fix: {EMULATOR_UPGRADE}, or set QEMU_CPU=max in the container's environment"


# qemu-user's words when the emulated program hit an instruction the emulated CPU lacks
# (SIGILL, signal 4), and the shell's; 132 = 128 + SIGILL
ILLEGAL_INSTRUCTION_MARKERS = ("uncaught target signal 4 ", "Illegal instruction")
SIGILL_EXIT = 132
NARROW_CPU_FIX = "arm64 machines of that generation would stop the same way; on newer cores (or qemu's `max`) it runs"


def illegal_instruction(exit_code: int | None, text: str) -> bool:
    """The program stopped on an instruction its CPU does not have."""
    return exit_code == SIGILL_EXIT or any(marker in text for marker in ILLEGAL_INSTRUCTION_MARKERS)


def narrow_cpu_problem(cpu: str) -> str:
    """Completes "the <arch> ...": a program needs more than the CPU model emulated."""
    return f"emulated CPU ({cpu}) lacks an instruction the image's program uses (illegal instruction)"


def cpu_level_missing(text: str) -> str | None:
    """`x86-64-v2` when glibc refused to start for lack of that CPU level, else None."""
    if GLIBC_CPU_MARKER not in text:
        return None
    return "x86-64-v" + text.split(GLIBC_CPU_MARKER, 1)[1].split()[0].rstrip(".,;:")


def exit_cause(state: ContainerState, log_lines: Sequence[str]) -> Cause:
    """Who is blamed for a container that stopped: a binary no CPU or emulator would run
    (exec format error, the kernel's words), else the component's own failure to start."""
    if any("exec format error" in text for text in (state.error, *log_lines)):
        return Cause.NOT_FOR_THIS_CPU
    return Cause.DOES_NOT_START


def classify_exit(state: ContainerState, log_lines: Sequence[str], *, emulated: bool = True) -> str:
    """One line on why a container stopped, naming the known emulation hazards."""
    text = "\n".join(log_lines)
    if state.oom_killed:
        return "OOM killed (memory limit reached)"
    if exit_cause(state, log_lines) is Cause.NOT_FOR_THIS_CPU:
        return "exec format error (the binary is not for this CPU and no emulator ran it)"
    level = cpu_level_missing(text)
    if level is not None:
        if emulated:
            return f"emulator too old: CPU does not support {level} ({EMULATOR_FIX})"
        return f"this host's CPU does not support {level}, which the image requires"
    if illegal_instruction(state.exit_code, text):
        return "stopped on an illegal instruction (SIGILL): the program uses an instruction this CPU lacks"
    if "uncaught target signal" in text:
        return "the emulator crashed (qemu: uncaught target signal)"
    last = one_line(text) if text.strip() else ""
    code = state.exit_code
    return f"exited with code {code}" + (f": {last}" if last else "")


def narrow_cpu_refusal(cpu: str, exit_code: int | None, text: str) -> EmulatorTooOld | None:
    """An illegal instruction under the narrower CPU model `cpu` a cell is emulated with
    (engine/platform.EMULATED_CPU; empty: not emulated): the runner's retry with `max` tells
    whether the program runs on a wider core (None when it does not apply)."""
    if not cpu or cpu == WIDEST_CPU or not illegal_instruction(exit_code, text):
        return None
    return EmulatorTooOld("", problem=narrow_cpu_problem(cpu), fix=NARROW_CPU_FIX)


def emulator_refusal(what: str, output: str, exit_code: int | None, qemu_cpu: str) -> EmulatorTooOld | None:
    """An emulated program's failure that is the emulator's CPU, not the program's: glibc
    refusing the CPU level, or a wider core than `qemu_cpu` needed (the runner retries)."""
    level = cpu_level_missing(output)
    if level is not None:
        return EmulatorTooOld(level, f"{what}: emulator too old: CPU does not support {level}")
    narrow = narrow_cpu_refusal(qemu_cpu, exit_code, output)
    if narrow is not None:
        return EmulatorTooOld("", f"{what}: the {narrow.problem}", problem=narrow.problem, fix=narrow.fix)
    return None


def stopped_failure(
    state: ContainerState, lines: Sequence[str], role: str, *, main: bool, emulated: bool, qemu_cpu: str
) -> StageFailed | LicenceRequired:
    """The failure to raise for a container that stopped (`main`: the cell's own container,
    named by its role only where a retry says it): LicenceRequired when its log asks for a
    licence key or a EULA's acceptance (licences.py), EmulatorTooOld when glibc refused the
    emulated CPU or the program needs a wider core than `qemu_cpu` (the runner retries
    those), else StageFailed."""
    if (refusal := licence_refusal(lines, "" if main else role)) is not None:
        return refusal
    text = "\n".join(lines)
    detail = classify_exit(state, lines, emulated=emulated)
    level = cpu_level_missing(text)
    if level is not None and emulated:
        return EmulatorTooOld(level, f"{role}: {detail}")
    narrow = narrow_cpu_refusal(qemu_cpu, state.exit_code, text)
    if narrow is not None:
        return EmulatorTooOld("", f"{role}: {detail}", problem=narrow.problem, fix=narrow.fix)
    return StageFailed(detail if main else f"{role}: {detail}", cause=exit_cause(state, lines))
