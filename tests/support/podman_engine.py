"""Podman serving the Docker-compatible API on a socket of the test's own: Debian's podman
(installed with the lab registry's registries.conf.d drop-in by `scripts/setup-host.sh
--test`), started as `podman system service --time=0 unix://<socket>` and stopped at the
end of the test session. The machine's dockerd is never touched.

- Storage is podman's own system store (/var/lib/containers): images pulled from the lab
  registry stay for the next session, as a user's would.
- A containers.conf of the test's own (CONTAINERS_CONF) gives the networks the service
  creates an address pool of their own (10.214.0.0/16, beside the second dockerd's
  10.213.0.0/16). Podman's networks are bridges whose traffic crosses the host's FORWARD
  chain (the main engine loads br_netfilter), whose policy dockerd set to DROP: netavark
  accepts the traffic of the networks it NATs, but not of `internal` ones, so containers
  on an internal network could resolve each other's names and not connect. One ACCEPT
  rule for the pool, with a comment naming this session's pid, is inserted while the
  service runs and removed after (and those of sessions that were killed, at the next
  start). A host with Podman alone has no DROP policy to meet.
- The service runs with podman's default container limits: ecoready's own limits
  (app/engine/podman.py) are what lets its containers start here.

Use the `podman_engine` fixture (session scope; registered in tests/conftest.py);
`engine.ensure_running()` is idempotent.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ADDRESS_POOL = "10.214.0.0/16"
REGISTRIES_DROP_IN = Path("/etc/containers/registries.conf.d/ecoready-lab.conf")
# netavark named: with a CNI config lying around, podman would otherwise pick its backend
# by what it finds on first use (aardvark-dns gives netavark's networks container DNS)
CONTAINERS_CONF = (
    f'[network]\nnetwork_backend = "netavark"\ndefault_subnet_pools = [{{"base" = "{ADDRESS_POOL}", "size" = 24}}]\n'
)
START_TIMEOUT = 60.0


class PodmanEngine:
    def __init__(self, root: Path) -> None:
        self.root = root
        # a path that does not look like podman's: ecoready must learn it from /version
        self.socket = root / "api.sock"
        self.conf = root / "containers.conf"
        self.log = root / "service.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._rule = _forward_rule(os.getpid())
        self._rule_in = False

    @property
    def unix_url(self) -> str:
        return f"unix://{self.socket}"

    def env(self) -> dict[str, str]:
        """Environment for an ecoready process that uses this engine (and only it)."""
        return {"DOCKER_HOST": self.unix_url}

    # -- lifecycle -----------------------------------------------------------------------
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def answers(self) -> bool:
        return self.running() and self.version(check=False) is not None

    def ensure_running(self) -> None:
        """Start the service unless it runs and answers (idempotent)."""
        if self.answers():
            return
        self.stop()
        self.conf.write_text(CONTAINERS_CONF)
        self.socket.unlink(missing_ok=True)
        if not self._rule_in:
            _drop_rules_of_dead_sessions()
            subprocess.run(
                ["iptables", "-w", "-I", "FORWARD", *self._rule], check=True, capture_output=True, timeout=30
            )
            self._rule_in = True
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                ["podman", "system", "service", "--time=0", self.unix_url],
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "CONTAINERS_CONF": str(self.conf)},
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"podman system service exited ({self.proc.returncode}): {self._tail()}")
            if self.version(check=False) is not None:
                return
            time.sleep(0.2)
        raise RuntimeError(f"podman's API did not answer within {START_TIMEOUT:.0f} s: {self._tail()}")

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.proc = None

    def close(self) -> None:
        """Stop the service and drop the FORWARD rule. Containers outlive podman's service
        (each has its conmon): a test removes its own, and a labelled one left over is
        removed here so that nothing of this session stays."""
        self.stop()
        left = self.podman("ps", "-aq", "--filter", "label=ecoready-test.session", check=False).stdout.split()
        if left:
            self.podman("rm", "-f", "-t", "0", *left, check=False)
        if self._rule_in:
            subprocess.run(["iptables", "-w", "-D", "FORWARD", *self._rule], capture_output=True, timeout=30)
            self._rule_in = False

    def _tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-2000:]
        return ""

    # -- looking at it -------------------------------------------------------------------
    def version(self, *, check: bool = True) -> dict[str, object] | None:
        """The API's /version answer (docker's own client, through the socket)."""
        result = subprocess.run(
            ["docker", "version", "--format", "{{json .Server}}"],
            capture_output=True,
            text=True,
            timeout=20,
            env={**os.environ, "DOCKER_HOST": self.unix_url},
            check=False,
        )
        if result.returncode != 0:
            if check:
                raise RuntimeError(f"docker version on {self.unix_url}: {result.stderr.strip()}")
            return None
        data: dict[str, object] = json.loads(result.stdout)
        return data

    def podman(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """The podman CLI: it reads podman's store itself, not through the API, so what it
        shows does not depend on the API ecoready used."""
        return subprocess.run(
            ["podman", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=check,
            env={**os.environ, "CONTAINERS_CONF": str(self.conf)},
        )

    def labelled(self, label: str) -> dict[str, list[str]]:
        """ids (volumes: names) of containers, networks and volumes carrying `label`."""
        out = {}
        for kind, cmd in (
            ("containers", ["ps", "-aq"]),
            ("networks", ["network", "ls", "-q"]),
            ("volumes", ["volume", "ls", "-q"]),
        ):
            out[kind] = self.podman(*cmd, "--filter", f"label={label}").stdout.split()
        return out


RULE_COMMENT = "ecoready-test-podman-"


def _forward_rule(pid: int) -> list[str]:
    """The FORWARD rule of the test session `pid` (without -I/-D)."""
    return [
        "-s",
        ADDRESS_POOL,
        "-d",
        ADDRESS_POOL,
        "-m",
        "comment",
        "--comment",
        f"{RULE_COMMENT}{pid}",
        "-j",
        "ACCEPT",
    ]


def _drop_rules_of_dead_sessions() -> None:
    """The FORWARD rules a killed test session left (its pid is in their comment)."""
    listed = subprocess.run(["iptables", "-w", "-S", "FORWARD"], capture_output=True, text=True, timeout=30)
    pids = {int(m) for m in re.findall(rf"{RULE_COMMENT}(\d+)", listed.stdout)}
    for pid in pids:
        if not Path(f"/proc/{pid}").exists():
            subprocess.run(["iptables", "-w", "-D", "FORWARD", *_forward_rule(pid)], capture_output=True, timeout=30)


@pytest.fixture(scope="session")
def podman_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PodmanEngine]:
    """Podman's API service, started once per test session and stopped at its end."""
    for tool in ("podman", "iptables", "docker"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: run `make test-host` (scripts/setup-host.sh --test)")
    if not REGISTRIES_DROP_IN.exists():
        pytest.fail(f"{REGISTRIES_DROP_IN} is missing (the lab registry is insecure for podman): run `make test-host`")
    # a short path: unix socket paths are limited to 107 bytes
    engine = PodmanEngine(Path(tmp_path_factory.mktemp("engine-p")))
    try:
        engine.ensure_running()
        yield engine
    finally:
        engine.close()
