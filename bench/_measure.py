"""Shared by the bench scripts: CPU seconds of containers (from their cgroups) and of
processes, sampled while something runs. Run the benches on a quiet machine: they measure
the whole engine's containers of one ecoready process, by its owner label."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from pathlib import Path

CGROUP_V1 = Path("/sys/fs/cgroup/cpu,cpuacct/docker")
CGROUP_V2 = Path("/sys/fs/cgroup/system.slice")
TICKS = 100  # USER_HZ on Linux


def container_cpu_seconds(container_id: str) -> float | None:
    v1 = CGROUP_V1 / container_id / "cpuacct.usage"
    if v1.exists():
        return int(v1.read_text()) / 1e9
    v2 = CGROUP_V2 / f"docker-{container_id}.scope" / "cpu.stat"
    if v2.exists():
        for line in v2.read_text().splitlines():
            if line.startswith("usage_usec"):
                return int(line.split()[1]) / 1e6
    return None


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of a live process (and its waited-for children), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / TICKS


class ContainerCpu:
    """Samples the CPU of every container an ecoready process owns, until stopped; a
    container's last sample before it is removed counts (sampling every `interval`)."""

    def __init__(self, owner_pid: int, interval: float = 0.25) -> None:
        self.owner = f"ecoready.owner={socket.gethostname()}:{owner_pid}"
        self.interval = interval
        self.seen: dict[str, float] = {}
        self._stop = threading.Event()
        self._ids: list[str] = []
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> ContainerCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def total(self) -> float:
        return sum(self.seen.values())

    def _loop(self) -> None:
        last_list = 0.0
        while not self._stop.is_set():
            if time.monotonic() - last_list > 1.0:
                out = subprocess.run(
                    ["docker", "ps", "-q", "--no-trunc", "--filter", f"label={self.owner}"],
                    capture_output=True,
                    text=True,
                    check=False,
                ).stdout
                self._ids = sorted(set(self._ids) | set(out.split()))
                last_list = time.monotonic()
            for cid in self._ids:
                value = container_cpu_seconds(cid)
                if value is not None:
                    self.seen[cid] = max(self.seen.get(cid, 0.0), value)
            time.sleep(self.interval)


def ecoready_exe() -> str:
    import sys

    return str(Path(sys.executable).with_name("ecoready"))
