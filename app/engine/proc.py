"""Facts about processes on this machine, read from /proc."""

from __future__ import annotations


def process_start(pid: int) -> str:
    """A process's start time in clock ticks since boot ("" if unknown): guards against pid reuse."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            stat = handle.read()
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""
