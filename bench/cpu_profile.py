"""Where a command's CPU goes (`make test`, a run, a lab build): every process that ends
while it runs is counted by the kernel's process accounting (`accton`, Debian's `acct`),
inside containers too (their programs, arm64 ones under qemu, keep their own names);
each container's CPU comes from its cgroup with the run (`ecoready.owner`) and cell
(`ecoready.cell`) labels it carries; the engine's daemons from /proc. Prints the
machine's busy CPU, then CPU by program, by run, by cell.

    bench/cpu_profile.py [--top N] -- make test

Needs root and `accton`; it turns process accounting off when done. Run it on a quiet
machine: every process and container of the machine counts.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: bench/ imports as a package
from bench._measure import TICKS, ContainerCpu, process_cpu_seconds

DAEMONS = ("dockerd", "containerd")


class Labels(threading.Thread):
    """The labels of every container seen while the command runs, read once per container
    (they are gone when the container is)."""

    def __init__(self, cpu: ContainerCpu) -> None:
        super().__init__(daemon=True)
        self.cpu = cpu
        self.of: dict[str, dict[str, str]] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            for cid in [c for c in list(self.cpu.seen) if c not in self.of]:
                shown = subprocess.run(
                    ["docker", "inspect", "--format", "{{json .Config.Labels}}", cid],
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
                self.of[cid] = (json.loads(shown.stdout) or {}) if shown.returncode == 0 else {}
            time.sleep(1)


def daemon_cpu() -> dict[str, float]:
    out: dict[str, float] = {}
    for name in DAEMONS:
        pids = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True).stdout.split()
        out[name] = sum(process_cpu_seconds(int(p)) for p in pids)
    return out


def accounted(path: Path) -> list[tuple[str, float]]:
    """(program, CPU seconds) of each process the kernel accounted, from `dump-acct`."""
    dumped = subprocess.run(["dump-acct", str(path)], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in dumped.splitlines():
        fields = [f.strip() for f in line.split("|")]
        if len(fields) > 3:
            rows.append((fields[0], (float(fields[2]) + float(fields[3])) / TICKS))
    return rows


def table(title: str, seconds_by: dict[str, float], top: int, extra: dict[str, str] | None = None) -> None:
    print(f"\n{title}")
    for key, seconds in sorted(seconds_by.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {seconds:8.1f}  {key}{('  ' + extra[key]) if extra and key in extra else ''}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=20, help="rows per table (default 20)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ...")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("name the command to profile after --")
    if not shutil.which("accton") or not shutil.which("dump-acct"):
        print("cpu_profile: needs `accton` and `dump-acct` (apt-get install acct)", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory() as folder:
        pacct = Path(folder) / "pacct"
        pacct.touch()
        turned_on = subprocess.run(["accton", str(pacct)], capture_output=True, text=True)
        if turned_on.returncode != 0:  # not root, or a kernel without BSD process accounting
            print(f"cpu_profile: accton: {turned_on.stderr.strip() or turned_on.stdout.strip()}", file=sys.stderr)
            return 2
        daemons_before = daemon_cpu()
        started = time.monotonic()
        try:
            with ContainerCpu(interval=1.0) as cpu:
                labels = Labels(cpu)
                labels.start()
                code = subprocess.run(command).returncode
                labels.stop.set()
        finally:
            subprocess.run(["accton", "off"], check=True, capture_output=True)
        wall = time.monotonic() - started
        daemons = {k: v - daemons_before.get(k, 0.0) for k, v in daemon_cpu().items()}
        processes = accounted(pacct)

    by_program: dict[str, float] = collections.defaultdict(float)
    runs: collections.Counter[str] = collections.Counter()
    for program, seconds in processes:
        by_program[program] += seconds
        runs[program] += 1
    by_run: dict[str, float] = collections.defaultdict(float)
    by_cell: dict[str, float] = collections.defaultdict(float)
    arches: dict[str, float] = collections.defaultdict(float)
    for cid, seconds in cpu.used().items():
        found = labels.of.get(cid, {})
        cell = found.get("ecoready.cell", "(no cell label)")
        by_run[found.get("ecoready.owner", "(no run label)")] += seconds
        by_cell[cell] += seconds
        arches[cell.rsplit("/", 1)[-1] if "/" in cell else "?"] += seconds

    print(f"\ncommand exit {code}; wall {wall:.0f} s; machine busy {cpu.host_busy:.0f} CPU-s")
    print(f"processes ended: {len(processes)}, {sum(s for _, s in processes):.0f} CPU-s")
    print(f"containers: {len(cpu.seen)}, {cpu.total:.0f} CPU-s; by arch: ", end="")
    print(", ".join(f"{a} {s:.0f}" for a, s in sorted(arches.items(), key=lambda kv: -kv[1])))
    print("daemons: " + ", ".join(f"{k} {v:.0f} CPU-s" for k, v in daemons.items()))
    table("CPU-s by program (every process that ended)", by_program, args.top, {k: f"({runs[k]})" for k in runs})
    table("container CPU-s by run (ecoready.owner)", by_run, args.top)
    table("container CPU-s by cell", by_cell, args.top)
    return code


if __name__ == "__main__":
    sys.exit(main())
