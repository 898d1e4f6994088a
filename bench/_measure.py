"""Shared by the bench scripts: CPU seconds of containers (from their cgroups) and of
processes, sampled while something runs. Run the benches on a quiet machine: every
container of the local engine counts, not only those of the ecoready process measured."""

from __future__ import annotations

import threading
import time
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")
# Where the engine puts each container's CPU account: cgroup v1 mounts cpuacct alone or
# joined with cpu; v2 uses docker/ID (cgroupfs driver) or system.slice/docker-ID.scope.
V1_DIRS = ("cpuacct/docker", "cpu,cpuacct/docker")
V2_DIRS = ("docker", "system.slice")
TICKS = 100  # USER_HZ on Linux


def container_cpu() -> dict[str, float]:
    """CPU seconds of every container of the local engine now, by container id, read from
    the cgroup files: no docker call, so sampling costs next to nothing."""
    out: dict[str, float] = {}
    for name in V1_DIRS:
        for usage in (CGROUP / name).glob("*/cpuacct.usage"):
            out[usage.parent.name] = int(usage.read_text()) / 1e9
    for name in V2_DIRS:
        for stat in (CGROUP / name).glob("*/cpu.stat"):
            cid = stat.parent.name.removeprefix("docker-").removesuffix(".scope")
            for line in stat.read_text().splitlines():
                if line.startswith("usage_usec"):
                    out[cid] = int(line.split()[1]) / 1e6
    return out


def host_busy_seconds() -> float:
    """CPU seconds the whole machine spent not idle since boot (all CPUs), from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / TICKS


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of a live process (and its waited-for children), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / TICKS


class ContainerCpu:
    """Samples the CPU of the engine's containers until stopped: what containers that
    already ran had used is subtracted, and a container's last sample before it is removed
    counts (sampling every `interval`). Run on a quiet machine: every container counts.
    Also the whole machine's busy CPU over the same time (`host_busy`)."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.seen: dict[str, float] = {}
        self._before: dict[str, float] = {}
        self._busy_start = 0.0
        self.host_busy = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> ContainerCpu:
        self._before = container_cpu()
        self._busy_start = host_busy_seconds()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.host_busy = host_busy_seconds() - self._busy_start

    def used(self) -> dict[str, float]:
        """CPU seconds of each container while sampling (a container that was already
        there counts from the start only)."""
        return {cid: value - self._before.get(cid, 0.0) for cid, value in self.seen.items()}

    @property
    def total(self) -> float:
        return sum(self.used().values())

    def _loop(self) -> None:
        while not self._stop.is_set():
            for cid, value in container_cpu().items():
                self.seen[cid] = max(self.seen.get(cid, 0.0), value)
            time.sleep(self.interval)


def ecoready_exe() -> str:
    import sys

    return str(Path(sys.executable).with_name("ecoready"))
