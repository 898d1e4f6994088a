#!/usr/bin/env python3
"""`ecoready images` against regctl and crane over the lab matrix, side by side in one run:
wall time (median of several runs, the contestants taking turns), the requests each made
(counted in the registry's own access log) and the connections opened (at the proxy), with
every contestant's answers checked equal to ecoready's.

    .venv/bin/python bench/registry.py [--runs 5] [--rtt-ms 50] [--jobs 8] [--baseline PATH]

The peers (`bench/_registry_peers.py`, where their install line is) each run a parallel
script doing ecoready's work with ecoready's rules: the tag's manifest, each arch's entry
of an index, that manifest and its config (a mislabel shows only there), the suffix tags
when an arch is missing. A peer that is not installed is installed first (`go install`,
`apt-get`); when it cannot be, the bench stops with one line saying the command, before
any measurement. A sequential loop of Debian's `skopeo inspect --raw`, one per image (which
reads the tag's manifest only and cannot see a mislabel), is kept as a labelled baseline
(`--no-skopeo` leaves it out). `--baseline PATH` adds
another `ecoready` executable (an older checkout's venv, say) as a contestant.

The registry is a bench-owned docker-registry serving the lab registry's storage read-only
on its own port with its own log, so other users of the lab registry do not disturb the
counts. The lab must be built (`ecoready lab build`, gaps included).

Two networks: loopback (the lab as it is) and, through a bench-owned proxy that delays
every byte by half the round-trip time each way (and a new connection by one), a registry
--rtt-ms away, as public registries are. Plain HTTP on both (the lab registry's): no TLS
handshake is counted, which favours whoever opens more connections.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: bench/ imports as a package

from bench._registry_peers import Answer, Crane, Regctl, Tool, answers, from_ecoready, install_peers
from ecoready.lab.recipes import LAB_DIR
from ecoready.matrix.load import load
from ecoready.registry.availability import pairs
from ecoready.registry.early import PER_REGISTRY

ROOT = Path(__file__).resolve().parents[1]

LAB_MATRIX = ROOT / "containers" / "lab.toml"
ECOREADY = Path(sys.executable).with_name("ecoready")
LAB_PREFIX = "127.0.0.1:5000/"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- a registry of the bench's own, serving the lab's storage read-only ------------------
@dataclass
class BenchRegistry:
    host: str
    log: Path
    proc: subprocess.Popen[bytes]

    def served(self) -> int:
        return sum(1 for line in self.log.read_text(errors="replace").splitlines() if line.startswith("127.0.0.1 - "))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def start_registry(work: Path) -> BenchRegistry:
    storage = LAB_DIR / "registry" / "data"
    if not storage.is_dir():
        say(f"bench: the lab registry's storage {storage} is missing: run `ecoready lab build`")
        sys.exit(3)
    port = free_port()
    config = work / "registry.yml"
    log = work / "registry.log"
    config.write_text(
        "version: 0.1\nlog:\n  level: warn\n  formatter: text\n"
        f"storage:\n  filesystem:\n    rootdirectory: {storage}\n"
        "  maintenance:\n    uploadpurging:\n      enabled: false\n    readonly:\n      enabled: true\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )
    binary = shutil.which("docker-registry") or "/usr/bin/docker-registry"
    with log.open("ab") as out:
        proc = subprocess.Popen([binary, "serve", str(config)], stdout=out, stderr=subprocess.STDOUT)
    registry = BenchRegistry(f"127.0.0.1:{port}", log, proc)
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return registry
        except OSError:
            time.sleep(0.1)
    registry.stop()
    raise SystemExit(f"bench: docker-registry did not start: {log.read_text()[-300:]}")


# -- a proxy that makes the registry rtt away ------------------------------------------
class LatencyProxy:
    """Every byte arrives half a round trip after it was sent, in both directions, and a
    new connection costs a round trip (the TCP handshake): throughput is kept, only delay
    is added."""

    def __init__(self, upstream_port: int, rtt: float) -> None:
        self.upstream_port = upstream_port
        self.rtt = rtt
        self.port = free_port()
        self.connections = 0  # accepted since the start
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self.ready.wait(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def start() -> None:
            self.server = await asyncio.start_server(self._client, "127.0.0.1", self.port)
            self.ready.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        await asyncio.sleep(self.rtt)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                if not data:
                    break
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                writer.write(data)
                await writer.drain()
            writer.close()

        delivering = asyncio.create_task(deliver())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((time.monotonic() + self.rtt / 2, data))
        except OSError:
            pass
        queue.put_nowait((time.monotonic() + self.rtt / 2, b""))
        await delivering

    def stop(self) -> None:
        async def shutdown() -> None:
            self.server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


# -- the contestants ---------------------------------------------------------------------
@dataclass
class Contestant:
    what: str
    once: Callable[[], dict[tuple[str, str], Answer] | None] | Callable[[], None]  # its answers, None when not read
    seconds: list[float] = field(default_factory=list)  # wall time of each run
    cpu: list[float] = field(default_factory=list)  # CPU time of its processes in each run
    requests: set[int] = field(default_factory=set)
    connections: set[int] = field(default_factory=set)
    differences: list[str] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_ecoready(exe: str, matrix: Path, cache: Path, out: Path) -> dict[tuple[str, str], Answer]:
    cmd = [exe, "images", "--matrix", str(matrix), "--json", str(out)]
    done = subprocess.run(cmd, capture_output=True, env={**os.environ, "XDG_CACHE_HOME": str(cache)}, check=False)
    if done.returncode not in (0, 1):  # ecoready images exits 1: the lab has gaps on purpose
        raise SystemExit(f"bench: {exe} images failed ({done.returncode}): {done.stderr.decode()[-300:]}")
    return from_ecoready(json.loads(out.read_text()))


def skopeo_loop(skopeo: str, host: str, images: list[str]) -> Callable[[], None]:
    """The baseline: one `skopeo inspect --raw` per image, in turn (the tag's manifest only)."""

    def run() -> None:
        for image in images:
            ref = f"docker://{host}/{image.removeprefix(LAB_PREFIX)}"
            subprocess.run([skopeo, "inspect", "--raw", "--tls-verify=false", ref], capture_output=True, check=True)
        return None

    return run


def contestants(
    host: str,
    network: str,
    work: Path,
    exes: list[tuple[str, str]],
    peers: list[tuple[type[Tool], str]],
    jobs: int,
    skopeo: str | None,
) -> list[Contestant]:
    matrix = work / f"lab-{network.split()[0]}.toml"
    matrix.write_text(LAB_MATRIX.read_text() + f'\n[registry]\nmirror = "{host}"\n')
    lab = load(LAB_MATRIX)
    wanted = sorted({(lab.component(c).image, a) for c, a in pairs(lab)})
    images = sorted({image for image, _ in wanted})
    out: list[Contestant] = []
    for label, exe in exes:
        warm_cache = work / f"warm-{label}-{network.split()[0]}"
        run_ecoready(exe, matrix, warm_cache, work / "images.json")  # fills the warm cache

        def cold(exe: str = exe) -> dict[tuple[str, str], Answer]:
            return run_ecoready(exe, matrix, Path(tempfile.mkdtemp(dir=work, prefix="cold-")), work / "images.json")

        def warm(exe: str = exe, cache: Path = warm_cache) -> dict[tuple[str, str], Answer]:
            return run_ecoready(exe, matrix, cache, work / "images.json")

        out += [Contestant(f"{label}, cold cache", cold), Contestant(f"{label}, warm cache", warm)]
    for kind, binary in peers:
        tool = kind(binary, host, jobs)

        def script(tool: Tool = tool) -> dict[tuple[str, str], Answer]:
            return answers(tool, wanted)

        out.append(Contestant(f"{tool.name} script, -j {tool.jobs} (no cache)", script))
    if skopeo:
        out.append(
            Contestant(f"baseline: skopeo inspect --raw x {len(images)}, in turn", skopeo_loop(skopeo, host, images))
        )
    return out


def race(
    entrants: list[Contestant], runs: int, registry: BenchRegistry, proxy: LatencyProxy | None, truth: dict
) -> None:
    """Each contestant once per round, in turn, `runs` rounds: a busy spell of the shared
    machine falls on all of them alike."""
    for _ in range(runs):
        for c in entrants:
            before, cpu_before = registry.served(), children_cpu()
            connections = proxy.connections if proxy else 0
            started = time.perf_counter()
            said = c.once()
            c.seconds.append(time.perf_counter() - started)
            c.cpu.append(children_cpu() - cpu_before)
            time.sleep(0.05)  # the registry writes its log line after answering
            c.requests.add(registry.served() - before)
            if proxy:
                c.connections.add(proxy.connections - connections)
            if said is not None:
                c.differences = [
                    f"{image} {arch}: {said.get((image, arch))} (ecoready: {answer})"
                    for (image, arch), answer in sorted(truth.items())
                    if said.get((image, arch)) != answer
                ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--runs", type=int, default=5, help="rounds of the contestants (median reported)")
    parser.add_argument("--rtt-ms", type=float, default=50.0, help="emulated round trip to a remote registry")
    parser.add_argument(
        "--jobs",
        type=int,
        default=PER_REGISTRY,
        help=f"tool processes at once in each peer's script (default {PER_REGISTRY}: ecoready's requests at once)",
    )
    parser.add_argument("--baseline", metavar="PATH", help="another ecoready executable to race (e.g. main's)")
    parser.add_argument("--no-skopeo", action="store_true", help="leave out the sequential skopeo baseline")
    args = parser.parse_args()
    exes = [("ecoready", str(ECOREADY))]
    if args.baseline:
        exes.append(("baseline ecoready", args.baseline))
    # the peers it exists to compare against, installed when missing: else it stops here
    wanted = [Regctl.name, Crane.name, *([] if args.no_skopeo else ["skopeo"])]
    installed = install_peers(wanted, say)
    if isinstance(installed, str):
        print(installed, file=sys.stderr)
        return 2
    peers: list[tuple[type[Tool], str]] = [(kind, installed[kind.name]) for kind in (Regctl, Crane)]
    skopeo = installed.get("skopeo")
    load_before = os.getloadavg()
    lab = load(LAB_MATRIX)
    references = len(pairs(lab))
    distinct = len({(lab.component(c).image, a) for c, a in pairs(lab)})
    images = len({c.image for c in lab.components})
    remote = f"{args.rtt_ms:g} ms RTT"
    table: list[tuple[str, Contestant]] = []
    with tempfile.TemporaryDirectory(prefix="ecoready-bench-") as tmp:
        work = Path(tmp)
        # ecoready runs with its bytecode compiled, as a pip install leaves it, kept in the
        # bench's folder (not beside the sources of the checkouts raced); with
        # PYTHONDONTWRITEBYTECODE, set on some machines, an editable checkout would compile
        # its modules again on every run: some 35 ms no user pays. The first runs (the
        # truth, filling the warm caches) compile them.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        registry = start_registry(work)
        proxy = LatencyProxy(int(registry.host.rsplit(":", 1)[1]), args.rtt_ms / 1000)
        try:
            truth = run_ecoready(str(ECOREADY), LAB_MATRIX, work / "truth-cache", work / "truth.json")
            for network, host, counter in (
                ("loopback", registry.host, None),
                (remote, f"127.0.0.1:{proxy.port}", proxy),
            ):
                say(f"bench: {network}")
                entrants = contestants(host, network, work, exes, peers, args.jobs, skopeo)
                race(entrants, args.runs, registry, counter, truth)
                table += [(network, c) for c in entrants]
        finally:
            proxy.stop()
            registry.stop()
    print(f"bench/registry.py: `ecoready images` against regctl and crane scripts, matrix {LAB_MATRIX.name}")
    print(
        f"references: {references} (component, arch) pairs, {distinct} distinct (image, arch), {images} image "
        f"references; ecoready's budget {2 * references} requests"
    )
    print("requests: counted in the access log of a bench-owned docker-registry serving the lab's storage;")
    print("connections: accepted by the delaying proxy (remote network only)")
    print(f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in load_before)} before the bench")
    print()
    print(f"{'network':<13}{'what':<46}{'median s':>9}{'min s':>8}{'cpu s':>7}{'reqs':>6}{'conns':>6}  answers")
    for network, c in table:
        cpu = statistics.median(c.cpu)
        conns = "/".join(str(n) for n in sorted(c.connections)) if c.connections else "-"
        reqs = "/".join(str(n) for n in sorted(c.requests))
        said = (
            "baseline: not compared"
            if c.what.startswith("baseline:")
            else ("equal" if not c.differences else f"{len(c.differences)} DIFFER")
        )
        print(f"{network:<13}{c.what:<46}{c.median:>9.3f}{min(c.seconds):>8.3f}{cpu:>7.2f}{reqs:>6}{conns:>6}  {said}")
    print()
    for network, c in table:
        for line in c.differences[:5]:
            print(f"DIFFERENT ({network}, {c.what}): {line}")
    for network in ("loopback", remote):
        mine = {c.what: c for n, c in table if n == network}
        cold, warm = mine["ecoready, cold cache"], mine["ecoready, warm cache"]
        for what, other in mine.items():
            if what.startswith("ecoready,"):
                continue
            if what.startswith("baseline ecoready"):
                same = mine[f"baseline ecoready, {what.rsplit(', ', 1)[1]}"]
                ours = cold if what.endswith("cold cache") else warm
                print(f"ratio {network}: {what} / ecoready = {same.median / ours.median:.2f}x")
                continue
            print(
                f"ratio {network}: {what} / ecoready = {other.median / cold.median:.2f}x cold, "
                f"{other.median / warm.median:.2f}x warm"
            )
    differ = any(c.differences for _, c in table)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
