"""The lab's registry: Debian's docker-registry serving on 127.0.0.1, started and stopped
by ecoready (a pid file under the lab directory), idempotently."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ecoready.domain.errors import EnvironmentProblem
from ecoready.lab.oci_writer import RegistryWriter
from ecoready.lab.recipes import LAB_DIR, REGISTRY

Log = Callable[[str], None]


# -- the local registry process ---------------------------------------------------------
def _registry_paths(lab_dir: Path = LAB_DIR) -> tuple[Path, Path, Path, Path]:
    base = lab_dir / "registry"
    return base / "config.yml", base / "data", base / "registry.pid", base / "registry.log"


def registry_running() -> bool:
    writer = RegistryWriter(f"http://{REGISTRY}", timeout=3)
    try:
        return writer.ping()
    finally:
        writer.close()


def registry_up(log: Log) -> None:
    """Start Debian's docker-registry on 127.0.0.1 (idempotent)."""
    if registry_running():
        return
    binary = shutil.which("docker-registry")
    if binary is None:
        raise EnvironmentProblem(
            "docker-registry is not installed: `apt-get install docker-registry` "
            "(scripts/setup-host.sh in the ecoready checkout does)"
        )
    config, data, pidfile, logfile = _registry_paths()
    data.mkdir(parents=True, exist_ok=True)
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: info\n  formatter: text\n"
        f"storage:\n  filesystem:\n    rootdirectory: {data}\n  delete:\n    enabled: true\n"
        f"http:\n  addr: {REGISTRY}\n"
    )
    with logfile.open("ab") as out:
        proc = subprocess.Popen(
            [binary, "serve", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    pidfile.write_text(str(proc.pid))
    for _ in range(100):
        if registry_running():
            log(f"lab: registry listening on {REGISTRY} (pid {proc.pid})")
            return
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    tail = logfile.read_text(errors="replace").splitlines()[-3:]
    raise EnvironmentProblem(f"the lab registry did not start on {REGISTRY}: {' | '.join(tail)[-300:]}")


def registry_down(log: Log) -> bool:
    _, _, pidfile, _ = _registry_paths()
    try:
        pid = int(pidfile.read_text())
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pidfile.unlink(missing_ok=True)
        return False
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    pidfile.unlink(missing_ok=True)
    log(f"lab: registry stopped (pid {pid})")
    return True
