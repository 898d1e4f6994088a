"""`kubectl get pods -o yaml` and `-o json` of N pods (realistic: what kubectl prints for a
Deployment's MySQL pod with an exporter sidecar, status included, managedFields left out
as kubectl leaves them out) read by `init`'s reader (`app/stack/yaml_bounded.py`) and by
`ecoready init --from` end to end, each in a process of its own: wall seconds and peak RSS
(wait4). Side by side, the old reader (main before issue 54: PyYAML's pure-Python
SafeLoader, its node graph measured) on the smaller list. Target: 10,000 pods, each form,
read in under 5 s and 300 MB.

    .venv/bin/python bench/kube_read.py [--count 10000] [--old-count 1000] [--no-old]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: bench/ and tests/ import as packages
from bench._measure import ecoready_exe

ROOT = Path(__file__).resolve().parents[1]
POD = Path(__file__).with_name("kube_pod.yaml")  # one item of `kubectl get pods -o yaml`
OLD_COMMIT = "95971da"  # main before issue 54's reader

READ = """
import sys
from ecoready.domain.reading import read_bounded
from ecoready.stack.kube import MAX_BYTES, SKIPPED
from ecoready.stack.yaml_bounded import compact, load_all
data = compact(read_bounded(sys.argv[1], MAX_BYTES))  # as kube.py reads a file
(doc,) = load_all(data, sys.argv[1], SKIPPED)
assert len(doc["items"]) == int(sys.argv[2])
"""
OLD = """
import sys, importlib.util
spec = importlib.util.spec_from_file_location("old_yaml_bounded", sys.argv[3])
old = importlib.util.module_from_spec(spec)
spec.loader.exec_module(old)
text = open(sys.argv[1], encoding="utf-8").read()
try:
    (doc,) = old.load_all(text, sys.argv[1])
    print("read", len(doc["items"]))
except Exception as exc:
    print("refused:", str(exc)[:120])
"""


def write_pods(count: int, yaml_file: Path, json_file: Path) -> None:
    """The YAML kubectl prints for `count` pods, and its JSON form as kubectl indents it;
    run in a process of its own (`--write`), so that the processes measured are not forked
    from a large one (Linux keeps a forked child's peak RSS across exec)."""
    from ecoready.stack.yaml_bounded import load_one

    template = POD.read_text()
    items = []
    for n in range(count):
        text = template.replace("x2k9p", f"p{n:05d}").replace("0a34", f"{n:04x}")
        items.append(text.replace("10.244.17.41", f"10.244.{n // 250}.{n % 250}"))
    text = f'apiVersion: v1\nitems:\n{"".join(items)}kind: List\nmetadata:\n  resourceVersion: ""\n'
    yaml_file.write_text(text)
    json_file.write_text(json.dumps(load_one(text, str(yaml_file)), indent=4))  # as kubectl indents


def measured(argv: list[str]) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB, last line of output) of one process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    out = proc.stdout.read().decode("utf-8", "replace")
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    last = out.strip().splitlines()[-1] if out.strip() else ""
    if proc.returncode != 0:
        last = f"exit {proc.returncode}: {last[:150]}"
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--old-count", type=int, default=1_000)
    parser.add_argument("--no-old", action="store_true", help="skip the old reader (slow: minutes under load)")
    parser.add_argument("--write", nargs=3, metavar=("COUNT", "YAML", "JSON"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        write_pods(int(args.write[0]), Path(args.write[1]), Path(args.write[2]))
        return
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    rows: list[tuple[str, float, float, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        old_module = Path(tmp, "old_yaml_bounded.py")
        old_source = subprocess.run(
            ["git", "show", f"{OLD_COMMIT}:app/stack/yaml_bounded.py"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        old_module.write_text(old_source)
        counts = [args.count] if args.no_old or not old_source else sorted({args.old_count, args.count})
        for count in counts:
            files = {"yaml": Path(tmp, f"pods{count}.yaml"), "json": Path(tmp, f"pods{count}.json")}
            write = [sys.executable, __file__, "--write", str(count), str(files["yaml"]), str(files["json"])]
            subprocess.run(write, check=True)
            for form, file in files.items():
                done = len(rows)
                size = f"{count} pods {form} ({file.stat().st_size / 1e6:.1f} MB)"
                read = measured([sys.executable, "-c", READ, str(file), str(count)])
                rows.append((f"{size}: read", *read))
                init = measured([ecoready_exe(), "init", "--from", str(file), "-o", os.devnull, "--force"])
                rows.append((f"{size}: ecoready init", *init))
                if count == args.old_count and old_source and not args.no_old and form == "yaml":
                    old = measured([sys.executable, "-c", OLD, str(file), str(count), str(old_module)])
                    rows.append((f"{size}: read, old reader", *old))
                for name, wall, cpu, rss, last in rows[done:]:
                    print(f"{name:48} {wall:7.2f} s wall {cpu:7.2f} s CPU {rss:6.0f} MB  {last[:70]}", flush=True)
    big = [r for r in rows if r[0].startswith(f"{args.count} pods") and r[0].endswith(": read")]
    ok = all(wall < 5 and rss < 300 for _name, wall, _cpu, rss, _last in big)
    summary = ", ".join(
        f"{name.split(' (')[0]} {wall:.2f} s ({cpu:.2f} s CPU) {rss:.0f} MB" for name, wall, cpu, rss, _ in big
    )
    print(f"ratio: {summary} (target < 5 s and < 300 MB each) -> {'OK' if ok else 'MISSED'}")
    print(f"load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
