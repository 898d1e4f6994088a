"""What a cell's start stage does: start the probe and, when an emulated container dies of
the CPU model emulated for its arch, retry once from scratch with QEMU_CPU=max (the runner
puts the stage under its budget and decides who is blamed).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ecoready.domain.errors import EmulatorProblem, EmulatorTooOld, StageFailed
from ecoready.domain.events import Event, RunNote
from ecoready.engine.platform import WIDEST_CPU
from ecoready.plan.cells import CellPlan
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.exits import EMULATOR_FIX, EMULATOR_UPGRADE
from ecoready.probe_api.probe import Probe


async def start_stage(cell: CellPlan, ctx: ProbeContext, probe: Probe, emit: Callable[[Event], None]) -> str:
    """Start the probe; when an emulated container dies of `CPU does not support
    x86-64-v2` (an old qemu-user) or of an illegal instruction under the narrower CPU
    model emulated for its arch, retry once from scratch with QEMU_CPU=max in every
    container of the cell and say in the detail that the emulated CPU was the problem."""
    begun = time.monotonic()
    try:
        await probe.start()
        return f"ready in {time.monotonic() - begun:.1f} s"
    except EmulatorTooOld as first:
        if not cell.emulated or ctx.extra_env.get("QEMU_CPU") == WIDEST_CPU:
            raise
        problem = f"the {cell.arch} {first.problem}"
        fix = first.fix or EMULATOR_FIX
    emit(RunNote(f"{problem}; cells of that arch were retried with QEMU_CPU=max ({fix})"))
    await ctx.reset()
    ctx.extra_env["QEMU_CPU"] = WIDEST_CPU
    begun = time.monotonic()
    try:
        await probe.start()
    except EmulatorTooOld as again:
        raise EmulatorProblem(f"{problem}, even with QEMU_CPU=max ({again})", fix=EMULATOR_UPGRADE) from None
    except StageFailed as exc:
        raise StageFailed(f"{exc} (after a retry with QEMU_CPU=max: {problem})", cause=exc.cause) from None
    return f"ready in {time.monotonic() - begun:.1f} s with QEMU_CPU=max ({problem}; {fix})"
