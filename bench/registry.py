#!/usr/bin/env python3
"""`ecoready images` against a loop of Debian's `skopeo inspect --raw`, over the lab matrix,
side by side in one run: wall time (median of several runs) and the requests each made,
counted from the registry's own access log.

    sudo .venv/bin/python bench/registry.py [--runs 5] [--rtt-ms 50]

Set-up (idempotent): skopeo from Debian (`apt-get install -y skopeo`, as root) when it is
missing. The registry is a bench-owned docker-registry serving the lab registry's storage
read-only on its own port with its own log, so other users of the lab registry do not
disturb the counts. The lab must be built (`ecoready lab build`, gaps included).

References are the matrix's (component, arch) pairs: what `ecoready images` answers, one
row each. The request budget is two per reference. The skopeo loop runs one
`skopeo inspect --raw` per reference (the loop a script checking every cell would run); the
loop over distinct image references (half as many calls) is shown too.

Two networks: loopback (the lab as it is) and, through a bench-owned proxy that delays
every byte by half the round-trip time each way (and a new connection by one), a registry
--rtt-ms away, as public registries are.
"""

from __future__ import annotations

import argparse
import asyncio
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
from dataclasses import dataclass
from pathlib import Path

from ecoready.lab.recipes import LAB_DIR
from ecoready.matrix.load import load
from ecoready.registry.availability import pairs

ROOT = Path(__file__).resolve().parents[1]

LAB_MATRIX = ROOT / "containers" / "lab.toml"
ECOREADY = Path(sys.executable).with_name("ecoready")
LAB_PREFIX = "127.0.0.1:5000/"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def ensure_skopeo() -> str:
    found = shutil.which("skopeo")
    if found:
        return found
    if os.geteuid() != 0:
        say("bench: skopeo is missing: run as root (it installs Debian's skopeo) or `apt-get install -y skopeo`")
        sys.exit(3)
    say("bench: installing Debian's skopeo")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "install", "-y", "-qq", "skopeo"], check=True, env=env, capture_output=True)
    return shutil.which("skopeo") or "skopeo"


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
class Result:
    network: str
    what: str
    seconds: list[float]  # wall time of each run
    cpu: list[float]  # CPU time (user + system) of the processes of each run
    requests: int

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, env={**os.environ, **(env or {})}, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):  # ecoready images exits 1: the lab has gaps on purpose
        raise SystemExit(f"bench: {' '.join(cmd[:3])} failed ({done.returncode}): {done.stderr.decode()[-300:]}")
    return elapsed


def measure(registry: BenchRegistry, network: str, what: str, runs: int, once: Callable[[int], float]) -> Result:
    seconds, cpu, requests = [], [], set()
    for i in range(runs):
        before, cpu_before = registry.served(), children_cpu()
        seconds.append(once(i))
        cpu.append(children_cpu() - cpu_before)
        time.sleep(0.05)  # the registry writes its log line after answering
        requests.add(registry.served() - before)
    if len(requests) != 1:
        say(f"bench: note: {what} made {sorted(requests)} requests in different runs")
    return Result(network, what, seconds, cpu, max(requests))


def bench_network(registry: BenchRegistry, host: str, network: str, runs: int, skopeo: str, work: Path) -> list[Result]:
    matrix_text = LAB_MATRIX.read_text() + f'\n[registry]\nmirror = "{host}"\n'
    matrix = work / f"lab-{network.split()[0]}.toml"
    matrix.write_text(matrix_text)
    lab = load(LAB_MATRIX)
    wanted = pairs(lab)
    images = sorted({lab.component(c).image for c, _ in wanted})
    per_pair = [lab.component(c).image for c, _ in wanted]
    warm_cache = work / f"cache-warm-{network.split()[0]}"
    images_cmd = [str(ECOREADY), "images", "--matrix", str(matrix), "--json", str(work / "images.json")]
    timed(images_cmd, {"XDG_CACHE_HOME": str(warm_cache)})  # fills the warm cache

    def ecoready_cold(i: int) -> float:
        return timed(images_cmd, {"XDG_CACHE_HOME": tempfile.mkdtemp(dir=work, prefix="cold-")})

    def ecoready_warm(i: int) -> float:
        return timed(images_cmd, {"XDG_CACHE_HOME": str(warm_cache)})

    def skopeo_loop(refs: list[str]) -> Callable[[int], float]:
        def run(i: int) -> float:
            started = time.perf_counter()
            for ref in refs:
                timed(
                    [
                        skopeo,
                        "inspect",
                        "--raw",
                        "--tls-verify=false",
                        f"docker://{host}/{ref.removeprefix(LAB_PREFIX)}",
                    ]
                )
            return time.perf_counter() - started

        return run

    contestants: list[tuple[str, Callable[[int], float]]] = [
        ("ecoready images, cold cache", ecoready_cold),
        ("ecoready images, warm cache", ecoready_warm),
        (f"skopeo inspect --raw x {len(per_pair)} (per reference)", skopeo_loop(per_pair)),
        (f"skopeo inspect --raw x {len(images)} (per image)", skopeo_loop(images)),
    ]
    return [measure(registry, network, what, runs, once) for what, once in contestants]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each contestant (median reported)")
    parser.add_argument("--rtt-ms", type=float, default=50.0, help="emulated round trip to a remote registry")
    args = parser.parse_args()
    skopeo = ensure_skopeo()
    load_before = os.getloadavg()
    lab = load(LAB_MATRIX)
    references = len(pairs(lab))
    images = len({c.image for c in lab.components})
    with tempfile.TemporaryDirectory(prefix="ecoready-bench-") as tmp:
        work = Path(tmp)
        registry = start_registry(work)
        proxy = LatencyProxy(int(registry.host.rsplit(":", 1)[1]), args.rtt_ms / 1000)
        try:
            results = bench_network(registry, registry.host, "loopback", args.runs, skopeo, work)
            remote = f"{args.rtt_ms:g} ms RTT"
            results += bench_network(registry, f"127.0.0.1:{proxy.port}", remote, args.runs, skopeo, work)
        finally:
            proxy.stop()
            registry.stop()
    budget = 2 * references
    print(f"bench/registry.py: `ecoready images` vs a loop of `skopeo inspect --raw`, matrix {LAB_MATRIX.name}")
    print(f"references: {references} (component, arch) pairs over {images} image references; budget {budget} requests")
    print("requests: counted in the access log of a bench-owned docker-registry serving the lab's storage")
    print()
    print(f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in load_before)} before the bench")
    print()
    print(f"{'network':<14}{'what':<44}{'median s':>10}{'min s':>8}{'cpu s':>8}{'requests':>10}")
    for r in results:
        cpu = statistics.median(r.cpu)
        print(f"{r.network:<14}{r.what:<44}{r.median:>10.3f}{min(r.seconds):>8.3f}{cpu:>8.3f}{r.requests:>10}")
    print()
    by = {(r.network, r.what.split(",")[-1].strip() if r.what.startswith("ecoready") else r.what): r for r in results}
    lines = []
    for network in ("loopback", remote):
        cold, warm = by[(network, "cold cache")], by[(network, "warm cache")]
        loop = by[(network, f"skopeo inspect --raw x {references} (per reference)")]
        per_image = by[(network, f"skopeo inspect --raw x {images} (per image)")]
        lines.append(
            f"{network}: skopeo per reference / ecoready = {loop.median / cold.median:.1f}x cold, "
            f"{loop.median / warm.median:.1f}x warm (per image: {per_image.median / cold.median:.1f}x, "
            f"{per_image.median / warm.median:.1f}x)"
        )
        for r in (cold, warm):
            verdict = "within" if r.requests <= budget else "OVER"
            lines.append(f"  {r.what}: {r.requests} requests, {verdict} the budget of {budget}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
