"""The engine found as users have it, and asked (not the client's kernel) what it runs.

Each run is a lab subset (a server on both arches, arm64 emulated, and a connector) run
headless in a private mount namespace around the ecoready process (`unshare --mount`):
there the default socket is hidden (/dev/null bound over it) and DOCKER_HOST is unset, so
the engine is reached only through a docker context naming another socket path (the real
engine's socket bound there); or the client's /proc/sys/fs/binfmt_misc is hidden (an empty
tmpfs over it) while the engine, on the same kernel, still has qemu registered.
The engine that cannot run arm64 at all is this one with its qemu-aarch64 handler switched
off for the length of one run (`alone`: nothing else may need emulation meanwhile).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ecoready.run.emulation import ASKED_AS
from tests.support.cli import ROOT

pytestmark = pytest.mark.docker

MATRIX = """
profile = "smoke"
arches = ["amd64", "arm64"]

[[components]]
id = "mariadb-10.11"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:10.11"

[[components]]
id = "connector-python-pymysql"
category = "connector"
probe = "connector"
image = "127.0.0.1:5000/lab/connectors:bookworm"
backend = "mariadb-10.11"
arches = ["amd64"]
options = { language = "python-pymysql" }
"""
SOCKET = "/var/run/docker.sock"
BINFMT = "/proc/sys/fs/binfmt_misc"
QEMU_AARCH64 = Path(BINFMT) / "qemu-aarch64"


def context(config: Path, name: str, host: str) -> None:
    meta = config / "contexts" / "meta" / hashlib.sha256(name.encode()).hexdigest()
    meta.mkdir(parents=True)
    body = {"Name": name, "Metadata": {}, "Endpoints": {"docker": {"Host": host, "SkipTLSVerify": False}}}
    (meta / "meta.json").write_text(json.dumps(body))
    (config / "config.json").write_text(json.dumps({"currentContext": name}))


def run_in_namespace(
    work: Path, mounts: list[str], *args: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """`ecoready ARGS` in a private mount namespace after `mounts` (shell commands)."""
    exe = str(Path(sys.executable).with_name("ecoready"))
    script = " && ".join([*mounts, "exec " + shlex.join([exe, *args])])
    clean = {k: v for k, v in os.environ.items() if k not in ("DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG")}
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
        env={**clean, "XDG_CACHE_HOME": str(work / "cache"), **env},
    )


def headless(work: Path, mounts: list[str], env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    (work / "m.toml").write_text(MATRIX)
    out = work / "report.json"
    args = ("run", "--headless", "--matrix", str(work / "m.toml"), "--json", str(out))
    result = run_in_namespace(work, mounts, *args, env=env or {})
    report: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    return result.returncode, report, result.stderr


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report.get("cells", [])}


ALL_READY = {
    "mariadb-10.11/amd64": "ready",
    "mariadb-10.11/arm64": "ready",
    "connector-python-pymysql/amd64": "ready",
}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return tmp_path


def test_the_engine_is_found_through_the_docker_context_alone(lab: Path, work: Path) -> None:
    other = work / "elsewhere" / "engine.sock"
    other.parent.mkdir()
    other.touch()
    config = work / "docker-config"
    context(config, "lab-engine", f"unix://{other}")
    mounts = [f"mount --bind {SOCKET} {other}", f"mount --bind /dev/null {SOCKET}"]
    code, report, err = headless(work, mounts, {"DOCKER_CONFIG": str(config)})
    assert statuses(report) == ALL_READY, err[-3000:]
    assert code == 0, err[-2000:]
    host = report["hosts"][0]
    said = f"at unix://{other} (docker context lab-engine (from {config / 'config.json'}))"
    assert host["engine"].startswith("Docker Engine ") and host["engine"].endswith(said), host
    assert host["engine_kind"] == "docker" and host["docker"] == ""
    assert f"ecoready: engine of local: {host['engine']}" in err.splitlines()
    # the same namespace without the context: nothing answers, and the error says where it
    # looked, how that was chosen and what would help, in one line
    bare = run_in_namespace(work, mounts, "doctor", env={"DOCKER_CONFIG": str(work / "none")})
    assert bare.returncode == 3 and "Traceback" not in bare.stderr
    line = next(x for x in bare.stdout.splitlines() if x.startswith("engine: "))
    assert f"unix://{SOCKET} (the default socket; no other engine's socket was found) is unreachable" in line
    assert "set DOCKER_HOST or `docker context use NAME`" in line and "make" not in line.split()


def test_arm64_is_found_by_asking_the_engine_when_the_clients_binfmt_is_hidden(lab: Path, work: Path) -> None:
    assert QEMU_AARCH64.exists(), "the engine must have qemu-aarch64 registered for this test"
    code, report, err = headless(work, [f"mount -t tmpfs none {BINFMT}"])
    assert statuses(report) == ALL_READY, err[-3000:]
    assert code == 0
    host = report["hosts"][0]
    assert host["emulated_arches"] == ["arm64"] and host["emulators"]["arm64"] == ASKED_AS, host
    assert any(c["emulated"] for c in report["cells"] if c["id"] == "mariadb-10.11/arm64")
    # asked once per engine: the next run remembers the answer and asks no container first
    memory = json.loads((work / "cache" / "ecoready" / "engines.json").read_text())
    assert [list(arches) for arches in memory.values()] == [["arm64"]]
    _, again, err = headless(work, [f"mount -t tmpfs none {BINFMT}"])
    assert statuses(again) == ALL_READY, err[-3000:]
    assert again["hosts"][0]["emulators"]["arm64"].endswith("remembered from an earlier run")


@pytest.fixture
def no_arm64() -> Iterator[None]:
    """This kernel's qemu-aarch64 handler off for one test, back on after it whatever happens."""
    assert QEMU_AARCH64.read_text().startswith("enabled")
    QEMU_AARCH64.write_text("0")
    try:
        yield
    finally:
        QEMU_AARCH64.write_text("1")


@pytest.mark.alone
def test_an_engine_that_cannot_run_arm64_gets_no_host_and_its_own_remedy(lab: Path, work: Path, no_arm64: None) -> None:
    code, report, err = headless(work, [f"mount -t tmpfs none {BINFMT}"])
    assert statuses(report) == {**ALL_READY, "mariadb-10.11/arm64": "error"}, err[-3000:]
    assert code == 3
    cell = next(c for c in report["cells"] if c["id"] == "mariadb-10.11/arm64")
    blame = next(s["blame"] for s in cell["stages"] if s["blame"])
    assert blame["cause"] == "no-host" and blame["subject"] == "arm64"
    assert "tonistiigi/binfmt --install arm64" in blame["fix"] and "make" not in blame["fix"].split()
    assert "cannot run arm64 containers" in err
    # asked by name, the arch is refused before any cell, with the same remedy
    asked = run_in_namespace(
        work,
        [f"mount -t tmpfs none {BINFMT}"],
        *("run", "--headless", "--matrix", str(work / "m.toml"), "--arch", "arm64", "--json", "-"),
        env={},
    )
    assert asked.returncode == 3 and asked.stdout == ""
    assert (
        asked.stderr.strip().splitlines()[-1].startswith("ecoready: error: no engine serves arm64: register qemu-user")
    )


def test_doctor_on_a_working_engine_and_lab_registry_is_ready(tmp_path: Path) -> None:
    """The lab registry answers and the engine runs: the summary says ready, exit 0."""
    import subprocess
    import sys

    matrix = tmp_path / "m.toml"
    matrix.write_text(
        'arches = ["amd64"]\n[[components]]\nid = "lab"\ncategory = "server"\nprobe = "server"\n'
        'image = "127.0.0.1:5000/lab/mariadb:10.11"\n'
    )
    exe = Path(sys.executable).with_name("ecoready")
    result = subprocess.run(
        [str(exe), "doctor", "--matrix", str(matrix)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].startswith(f"doctor: ready to run {matrix}")
