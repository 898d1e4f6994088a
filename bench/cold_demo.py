#!/usr/bin/env python3
"""A cold `make demo`, as on a machine made new, and the three times a newcomer waits:
the first verdict, the native arch all answered, the whole demo (with the load average
before and after, since a shared machine's figures are only relative).

    sudo .venv/bin/python bench/cold_demo.py [--demo PATH/scripts/demo.sh] [--keep]

Made new: an engine of its own (a second dockerd, tests/support/second_engine.py, with an
empty data directory: no image, no build cache, no driver installed), a lab folder and a
registry of its own (ECOREADY_LAB_DIR; ECOREADY_LAB_REGISTRY on 127.0.0.1:5000 when that
port is free, else on a free port with a copy of the lab matrix naming it, DEMO_MATRIX,
which only a demo.sh that reads it takes), reports in a folder of its own (DEMO_OUT).
Nothing of the machine's engine, lab or registry is used or touched. The emulator stays
registered: unregistering binfmt_misc would break every other user's emulated containers
on a shared machine, and registering it is seconds of `scripts/setup-host.sh`, not what a
newcomer waits for.

The second engine runs with the host's iptables left alone; so that the driver rows can
install from the package registries (PyPI, npm, Maven Central, the Go module proxy), the
bench adds a MASQUERADE rule and two FORWARD rules for its address pool (commented,
removed at the end).

`--demo` runs another checkout's scripts/demo.sh (with its own .venv) instead, e.g. main's
before a change, for the ratio; a demo.sh that does not read DEMO_OUT writes into its own
checkout's reports/. Uses the second engine's bridge: run it alone (not beside the tests
marked `alone`). Takes the machine for 15-40 minutes.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: bench/ and tests/ import as packages
from tests.support.matrices import EXPECTED
from tests.support.second_engine import ADDRESS_POOL, BRIDGE, BRIDGE_ADDRESS, SecondEngine, free_port

ROOT = Path(__file__).resolve().parents[1]

_TAG = ["-m", "comment", "--comment", "ecoready-cold-demo"]
# (table, chain, rule): the way out for the bench engine's containers, put in first and
# taken out at the end; docker's FORWARD policy drops what no rule accepts. Both its address
# pool (the runs' networks) and its default bridge's subnet: the driver installers run on
# the default bridge, and without its rules they had no DNS (every driver row failed to
# install in a demo of stop 65, and the demo's times were not a real demo's).
_SOURCES = (ADDRESS_POOL, str(ipaddress.ip_interface(BRIDGE_ADDRESS).network))
WAY_OUT = [
    rule
    for source in _SOURCES
    for rule in (
        ("nat", "POSTROUTING", ["-s", source, "!", "-o", BRIDGE, *_TAG, "-j", "MASQUERADE"]),
        ("filter", "FORWARD", ["-s", source, "!", "-o", BRIDGE, *_TAG, "-j", "ACCEPT"]),
        (
            "filter",
            "FORWARD",
            ["-d", source, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", *_TAG, "-j", "ACCEPT"],
        ),
    )
]
LAB_REGISTRY = "127.0.0.1:5000"  # the lab's registry, as containers/lab.toml names it
LINE = re.compile(r"^demo: \[(\d+):(\d\d)\] (.*)$")


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def first_verdict(reports: list[Path], started: float) -> float | None:
    """Seconds from the start to the first cell that finished, over the reports written."""
    ends = []
    for path in reports:
        try:
            cells = json.loads(path.read_text())["cells"]
        except (OSError, ValueError, KeyError):
            continue
        ends += [datetime.fromisoformat(c["finished_at"]).timestamp() for c in cells if c.get("finished_at")]
    return min(ends) - started if ends else None


def native_answered(lines: list[tuple[float, str]]) -> float | None:
    """When the native arch was all answered: the last native wave's line (waves), else the
    old demo's `<arch> answered` line."""
    for seconds, text in reversed(lines):
        if text.startswith("wave 2 answered") or re.match(r"^(amd64|arm64) answered", text):
            return seconds
    return None


def run_demo(demo: Path, env: dict[str, str], log: Path) -> tuple[int, list[tuple[float, str]]]:
    lines: list[tuple[float, str]] = []
    started = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["bash", str(demo)], env=env, stdout=out, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        assert proc.stderr is not None
        try:
            for raw in proc.stderr:
                out.write(raw)
                if LINE.match(raw.rstrip("\n")):
                    lines.append((time.monotonic() - started, raw.split("] ", 1)[1].rstrip("\n")))
                    print(f"[{(time.monotonic() - started) / 60:5.1f} min] {lines[-1][1]}", flush=True)
            code = proc.wait()
        except BaseException:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
            raise
    return code, lines


def cells_not_as_expected(report: Path) -> list[str]:
    """`cell: status` of each cell of the merged report whose status is not the one the
    lab matrix's grid has (tests/integration/test_lab_matrix.py's): a demo whose driver
    rows could not install (no way out for the bench engine) is not timed as a demo."""
    cells = json.loads(report.read_text())["cells"]
    return [f"{c['id']}: {c['status']}" for c in cells if EXPECTED.get(c["id"], "ready") != c["status"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo", default=str(ROOT / "scripts" / "demo.sh"), help="the demo.sh to run")
    parser.add_argument("--keep", action="store_true", help="keep the engine's data and the lab folder (printed)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench/cold_demo.py: run as root (it starts a dockerd)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # under /var/lib (the disk docker uses), a short path: unix socket paths are limited
    root = Path(tempfile.mkdtemp(prefix="demo-bench-", dir="/var/lib/ecoready"))
    engine = SecondEngine(root)
    rules: list[tuple[str, str, list[str]]] = []
    load_before = os.getloadavg()
    try:
        engine.start()
        for table, chain, rule in WAY_OUT:
            subprocess.run(["iptables", "-t", table, "-I", chain, *rule], check=True, timeout=30)
            rules.append((table, chain, rule))
        env = {
            **os.environ,
            "DOCKER_HOST": engine.unix_url,
            "ECOREADY_LAB_DIR": str(root / "lab"),
            "ECOREADY_LAB_REGISTRY": LAB_REGISTRY,
            "DEMO_OUT": str(root / "reports"),
            "XDG_CACHE_HOME": str(root / "cache"),  # no run history: a first run's order
        }
        if port_in_use(5000):  # the machine's own lab registry: the demo gets its own elsewhere
            registry = f"127.0.0.1:{free_port()}"
            matrix = root / "lab.toml"
            matrix.write_text((ROOT / "containers" / "lab.toml").read_text().replace(LAB_REGISTRY, registry))
            env.update(ECOREADY_LAB_REGISTRY=registry, DEMO_MATRIX=str(matrix))
            if "DEMO_MATRIX" not in Path(args.demo).read_text():
                print(
                    f"bench/cold_demo.py: {args.demo} reads no DEMO_MATRIX and {LAB_REGISTRY} is in use "
                    "(the machine's lab registry): run it where that port is free",
                    file=sys.stderr,
                )
                return 2
        started = time.time()
        code, lines = run_demo(Path(args.demo), env, root / "demo.log")
        whole = time.time() - started
        outs = [root / "reports", Path(args.demo).resolve().parents[1] / "reports"]
        reports = [p for out in outs for p in out.glob("demo-*.json")]
        first = first_verdict([p for p in reports if p.stat().st_mtime >= started], started)
        native = native_answered(lines)
        load_after = os.getloadavg()

        def minutes(seconds: float | None) -> str:
            return f"{seconds / 60:.1f} min" if seconds is not None else "not seen"

        print(f"bench/cold_demo.py: {args.demo}, {os.cpu_count()} cores, exit {code}")
        print(f"  first verdict:          {minutes(first)}  (target <= 5)")
        print(f"  native arch answered:   {minutes(native)}  (target <= 10)")
        print(f"  whole demo:             {minutes(whole)}  (target <= 20)")
        print(
            "  load average before: {:.2f} {:.2f} {:.2f}; after: {:.2f} {:.2f} {:.2f}".format(*load_before, *load_after)
        )
        merged = root / "reports" / "demo.json"
        unlike = cells_not_as_expected(merged) if merged.is_file() else ["no merged report"]
        if unlike:  # the times are a real demo's only when its cells are what the lab's are
            print(
                f"  NOT a demo's times: {len(unlike)} cell(s) not as test_lab_matrix expects: {', '.join(unlike[:8])}"
            )
            return 1
        return 0 if code in (0, 1) else code
    finally:
        # the demo's own registry (`lab up` in its lab folder): its pid file says which
        pidfile = root / "lab" / "registry" / "registry.pid"
        if pidfile.is_file():
            try:
                os.kill(int(pidfile.read_text()), signal.SIGTERM)
            except (ValueError, ProcessLookupError):
                pass
        for table, chain, rule in rules:
            subprocess.run(["iptables", "-t", table, "-D", chain, *rule], timeout=30)
        engine.close()
        if args.keep:
            print(f"kept: {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
