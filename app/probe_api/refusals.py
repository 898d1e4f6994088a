"""Who is to blame when the engine will not start a container, and the configuration error
of a matrix row whose image lacks what the row asks of it (pure)."""

from __future__ import annotations

import re

from ecoready.domain.blame import Cause
from ecoready.domain.errors import EcoreadyError, EngineError, MatrixMismatch, StageFailed
from ecoready.domain.model import Component

# How runc words a container whose program is not in its image.
_NO_PROGRAM = re.compile(r'exec: "([^"]*)": (executable file not found in \$PATH|no such file or directory)')
# How Docker refuses a CPU quota (a row's `cpus`) beyond the host's CPUs
_CPU_RANGE = re.compile(r"range of CPUs is from [0-9.]+ to [0-9.]+", re.IGNORECASE)


def matrix_mismatch(component: Component, what: str) -> MatrixMismatch:
    """`what` the row asks of its image and the image lacks: the matrix is to fix."""
    return MatrixMismatch(f"matrix row {component.id!r} (probe {component.probe}): {what}")


def start_refused(component: Component, arch: str, role: str, image: str, reason: str) -> EcoreadyError:
    """The engine's refusal to start a container, blamed on the right side: a program the
    image does not have is the matrix row's mistake (its command), and so is a CPU quota
    (`cpus`) beyond the host's CPUs; a binary for another CPU the image's; anything else
    stays the engine's."""
    missing = _NO_PROGRAM.search(reason)
    if missing is not None:
        what = f"{image} has no program {missing.group(1)!r} ({role}: {missing.group(2)})"
        return matrix_mismatch(component, what)
    if _CPU_RANGE.search(reason) and component.cpus is not None:
        return matrix_mismatch(component, f"cpus = {component.cpus:g} is more than the host has ({reason})")
    if "exec format error" in reason:
        why = f"{role}: exec format error (the binary is not for {arch} and no emulator ran it)"
        return StageFailed(why, cause=Cause.NOT_FOR_THIS_CPU)
    return EngineError(reason)
