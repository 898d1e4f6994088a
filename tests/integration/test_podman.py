"""ecoready on Podman: Debian's podman serving the Docker-compatible API on a socket the
test starts (tests/support/podman_engine.py), reached with DOCKER_HOST as a user would.
A lab subset (a server on amd64 and arm64 emulated, a connector against its backend on
an internal network, and a service row judged by its healthcheck) is ready on it; what
the engine layer relies on (labels, internal networks, volumes, exec, files through the
archive API, healthchecks, the limits containers need) is checked one by one; a kill -9
leaves containers behind, and `ecoready cleanup` on that DOCKER_HOST sweeps them."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ecoready.domain.specs import LABEL_OWNER, LABEL_OWNER_START, LABEL_RUN, ContainerSpec, SecretFile
from ecoready.engine.docker_host import DockerHost
from ecoready.engine.podman import ULIMITS
from tests.support.cli import ROOT, TEST_LABEL_KEY, TEST_SESSION, docker_labelled, ecoready
from tests.support.podman_engine import PodmanEngine

# one worker runs the whole file, one test after the other: the tests share one Podman
# store, and the run's "no volume left" is a before/after count of that store's volumes,
# which another test's volume (its own, swept at its end) would spoil
pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("podman")]

MARIADB = "127.0.0.1:5000/lab/mariadb:10.11"
CONNECTORS = "127.0.0.1:5000/lab/connectors:bookworm"
EMPTY: dict[str, list[str]] = {"containers": [], "networks": [], "volumes": []}

HEADER = 'profile = "smoke"\narches = ["amd64", "arm64"]\n\n'
SERVER = f"""[[components]]
id = "mariadb-10.11"
category = "server"
probe = "server"
image = "{MARIADB}"
"""
SUBSET = (
    HEADER
    + SERVER
    + f"""
[[components]]
id = "connector-python-pymysql"
category = "connector"
probe = "connector"
image = "{CONNECTORS}"
backend = "mariadb-10.11"
options = {{ language = "python-pymysql" }}
arches = ["amd64"]

[[components]]
id = "healthchecked"
category = "app"
probe = "command"
image = "{MARIADB}"
arches = ["amd64"]

[components.options]
mode = "service"
entrypoint = ["sleep", "600"]
healthcheck = ["CMD-SHELL", "test -d /proc/1"]
"""
)

# a run that stays up until it is killed: one command row sleeping
SLEEPER = f"""profile = "smoke"
arches = ["amd64"]

[[components]]
id = "sleeper"
category = "app"
probe = "command"
image = "{MARIADB}"

[components.options]
entrypoint = ["sleep", "600"]
limit = 600
"""


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in report["cells"]}


def checks_of(cell: dict[str, Any], stage: str = "smoke") -> dict[str, dict[str, Any]]:
    (found,) = [s for s in cell["stages"] if s["stage"] == stage]
    return {c["name"]: c for c in found["checks"]}


@pytest.fixture(scope="module")
def podman_run(lab: Path, podman_engine: PodmanEngine, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The subset, run headless with DOCKER_HOST on podman's socket."""
    podman_engine.ensure_running()
    folder = tmp_path_factory.mktemp("podman-run")
    (folder / "m.toml").write_text(SUBSET)
    out = folder / "r.json"
    volumes_before = set(podman_engine.podman("volume", "ls", "-q").stdout.split())
    result = ecoready(
        "run", "--headless", "--matrix", str(folder / "m.toml"), "--json", str(out), env=podman_engine.env()
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report: dict[str, Any] = json.loads(out.read_text())
    report["_stderr"] = result.stderr
    # the images declare VOLUME /var/lib/mysql: each container had an anonymous volume
    report["_volumes_left"] = set(podman_engine.podman("volume", "ls", "-q").stdout.split()) - volumes_before
    return report


def test_the_subset_is_ready_on_podman(podman_run: dict[str, Any], podman_engine: PodmanEngine) -> None:
    cells = by_id(podman_run)
    assert sorted(cells) == [
        "connector-python-pymysql/amd64",
        "healthchecked/amd64",
        "mariadb-10.11/amd64",
        "mariadb-10.11/arm64",
    ]
    not_ready = {cid: (c["status"], c["detail"]) for cid, c in cells.items() if c["status"] != "ready"}
    assert not not_ready, (not_ready, podman_run["_stderr"][-2000:])
    # the engine that answered is podman (its version, not dockerd's)
    (host,) = podman_run["hosts"]
    server = podman_engine.version()
    assert server is not None and host["docker_version"] == server["Version"]
    components = server["Components"]
    assert isinstance(components, list)
    assert "Podman Engine" in {c["Name"] for c in components}
    assert host["error"] == "" and host["emulated_arches"] == ["arm64"]
    # told by its /version: the socket's path (api.sock) does not say podman
    assert host["engine_kind"] == "podman" and host["engine"].startswith("Podman Engine ")
    assert f"{podman_engine.unix_url} (DOCKER_HOST)" in host["engine"]
    # nothing of the run is left on podman, and nothing of it ever went to dockerd
    assert podman_engine.labelled(f"ecoready.run={podman_run['run_id']}") == EMPTY
    assert docker_labelled(f"ecoready.run={podman_run['run_id']}") == EMPTY
    assert podman_run["_volumes_left"] == set(), "anonymous volumes are removed with their containers"


def test_arm64_ran_emulated_on_the_arm64_image(podman_run: dict[str, Any], podman_engine: PodmanEngine) -> None:
    cells = by_id(podman_run)
    for arch, machine in (("amd64", "x86_64"), ("arm64", "aarch64")):
        cell = cells[f"mariadb-10.11/{arch}"]
        assert cell["emulated"] is (arch == "arm64")
        assert checks_of(cell)["arch"]["detail"] == machine
        # the image podman pulled by the arch's digest, and the one the container ran
        image_id = cell["image"]["image_id"]
        shown = podman_engine.podman("image", "inspect", "--format", "{{.Architecture}}", image_id)
        assert shown.stdout.strip() == arch
    # the platform survey's container ran on podman too, one per arch
    platforms = {p["arch"]: p for p in podman_run["platforms"]}
    assert (platforms["amd64"]["machine"], platforms["amd64"]["emulated"]) == ("x86_64", False)
    assert (platforms["arm64"]["machine"], platforms["arm64"]["emulated"]) == ("aarch64", True)
    assert platforms["arm64"]["error"] == "" and platforms["amd64"]["error"] == ""


def test_the_connector_reached_its_backend_over_an_internal_network(podman_run: dict[str, Any]) -> None:
    checks = checks_of(by_id(podman_run)["connector-python-pymysql/amd64"])
    assert all(c["outcome"] == "pass" for c in checks.values()), checks
    assert "MariaDB" in checks["version"]["detail"]


def test_a_service_is_judged_by_its_healthcheck_without_systemd(podman_run: dict[str, Any]) -> None:
    """Podman runs healthchecks from systemd timers; there is no systemd here, so the
    health would stay `starting` unless ecoready runs the check (app/engine/podman.py)."""
    checks = checks_of(by_id(podman_run)["healthchecked/amd64"])
    assert checks["healthy"]["outcome"] == "pass"
    assert checks["healthy"]["detail"] == "its Docker healthcheck says healthy"


def test_the_engine_layer_on_podman(lab: Path, podman_engine: PodmanEngine) -> None:
    """Each thing a stage asks of the engine, on podman: files read from an image (the
    audit's way), labels, an internal network with a container's alias in its DNS, a
    volume, exec, files put before and after the start (the archive API: the file drop
    accepts only a dockerd), the limits, a healthcheck, and the sweep by run id."""
    podman_engine.ensure_running()
    run_id = f"podman-layer-{os.getpid()}"
    labels = {LABEL_RUN: run_id, TEST_LABEL_KEY: TEST_SESSION}

    async def scenario() -> dict[str, Any]:
        host = await DockerHost.connect("podman", podman_engine.unix_url)
        seen: dict[str, Any] = {"podman": host.podman, "drop": host.drop}
        try:
            image = await host.images.pull(MARIADB, "linux/amd64")
            # what the audit stage reads: files of an image, links followed inside it,
            # through a container created and never started (HEAD stat, then the file)
            seen["files"] = await host.images.read_files(
                image,
                [["/usr/bin/mysql"], ["/nonexistent", "/etc/os-release"], ["/nonexistent"]],
                labels=labels,
                max_bytes=1 << 20,
                timeout=120,
            )
            await host.create_network(f"{run_id}-net", labels, internal=True)
            await host.create_volume(f"{run_id}-vol", labels)
            spec = ContainerSpec(
                image=image,
                name=f"{run_id}-c",
                labels=labels,
                network=f"{run_id}-net",
                aliases=("srv",),
                entrypoint=("sleep", "300"),
                files=(SecretFile("/run/secrets/pw", b"hunter2", 0o600),),
                files_dir="/run/secrets",
                volumes={f"{run_id}-vol": "/data"},
                healthcheck=("CMD-SHELL", "test -f /data/ok"),
                health_interval=0.5,
            )
            cid = await host.run(spec)
            seen["health_before"] = (await host.state(cid)).health
            script = "cat /run/secrets/pw; echo; ulimit -n; ulimit -Hn; touch /data/ok; getent hosts srv; "
            seen["exec"] = await host.exec(cid, ["sh", "-c", script], timeout=30)
            await host.put_files(cid, (SecretFile("/run/secrets/later", b"later", 0o600),))
            seen["later"] = (await host.exec(cid, ["cat", "/run/secrets/later"], timeout=30)).stdout
            deadline = time.monotonic() + 30
            while (health := (await host.state(cid)).health) != "healthy" and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
            seen["health_after"] = health
            seen["internal"] = json.loads(podman_engine.podman("network", "inspect", f"{run_id}-net").stdout)[0]
            seen["labelled"] = [len(found) for found in await host.labelled(f"{LABEL_RUN}={run_id}")]
        finally:
            seen["sweep"] = await host.sweep(run_id=run_id)
            await host.close()
        return seen

    seen = asyncio.run(scenario())
    assert seen["podman"] is True
    mysql, os_release, missing = seen["files"]
    assert (mysql.asked, mysql.path, mysql.data) == ("/usr/bin/mysql", "/usr/bin/mariadb", b"")  # > max_bytes
    assert mysql.size > 1 << 20
    assert os_release.path == "/usr/lib/os-release" and b"bookworm" in os_release.data and missing is None
    assert seen["drop"] is None  # files go through the archive API on podman
    out = seen["exec"].stdout.splitlines()
    assert seen["exec"].exit_code == 0, seen["exec"]
    assert out[0] == "hunter2" and seen["later"] == "later"
    nofile = next(soft for name, soft, _ in ULIMITS if name == "nofile")
    assert out[1:3] == [str(nofile), str(nofile)]
    assert out[3].startswith("10.214.") and " srv" in out[3]  # the alias, in the test's pool
    assert seen["health_before"] in ("starting", "unhealthy") and seen["health_after"] == "healthy"
    assert seen["internal"]["internal"] is True
    assert seen["labelled"] == [1, 1, 1]
    sweep = seen["sweep"]
    swept = (sweep.containers, sweep.networks, sweep.volumes)
    assert swept == ((f"{run_id}-c",), (f"{run_id}-net",), (f"{run_id}-vol",))
    assert podman_engine.labelled(f"{LABEL_RUN}={run_id}") == EMPTY


def test_kill_9_leftovers_are_swept_by_cleanup_on_podman(
    lab: Path, podman_engine: PodmanEngine, tmp_path: Path
) -> None:
    podman_engine.ensure_running()
    matrix = tmp_path / "m.toml"
    matrix.write_text(SLEEPER)
    exe = Path(sys.executable).with_name("ecoready")
    with (tmp_path / "stderr.txt").open("wb") as stderr:
        proc = subprocess.Popen(
            [str(exe), "run", "--headless", "--matrix", str(matrix), "--json", os.devnull],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            cwd=ROOT,
            env={**os.environ, **podman_engine.env()},
        )
    owner = f"{LABEL_OWNER}={socket.gethostname()}:{proc.pid}"
    try:
        deadline = time.monotonic() + 120
        while (
            time.monotonic() < deadline
            and not podman_engine.podman(
                "ps", "-q", "--filter", f"label={owner}", "--filter", "status=running"
            ).stdout.split()
        ):
            assert proc.poll() is None, f"the run ended early: {(tmp_path / 'stderr.txt').read_text()[-2000:]}"
            time.sleep(0.3)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    left = podman_engine.labelled(owner)
    assert left["containers"], "kill -9 should leave the run's containers behind"
    # the labels the sweep tells a dead owner by, as podman kept them
    shown = podman_engine.podman("inspect", "--format", "{{json .Config.Labels}}", left["containers"][0])
    container_labels = json.loads(shown.stdout)
    assert container_labels[LABEL_OWNER] == f"{socket.gethostname()}:{proc.pid}"
    assert LABEL_OWNER_START in container_labels

    result = ecoready("cleanup", env=podman_engine.env())
    assert result.returncode == 0, result.stderr
    assert "removed container" in result.stderr
    assert podman_engine.labelled(owner) == EMPTY


def test_docker_and_podman_serve_one_run(lab: Path, podman_engine: PodmanEngine, tmp_path: Path) -> None:
    """Two [[hosts]]: this machine's dockerd for amd64, Podman for arm64 emulated."""
    podman_engine.ensure_running()
    matrix = tmp_path / "m.toml"
    hosts = '[[hosts]]\nname = "docker"\narches = ["amd64"]\n\n'
    hosts += f'[[hosts]]\nname = "podman"\ndocker = "{podman_engine.unix_url}"\narches = ["arm64"]\n\n'
    matrix.write_text(HEADER + hosts + SERVER)
    out = tmp_path / "r.json"
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--json", str(out))
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(out.read_text())
    cells = {cid: (c["host"], c["emulated"], c["status"]) for cid, c in by_id(report).items()}
    assert cells == {
        "mariadb-10.11/amd64": ("docker", False, "ready"),
        "mariadb-10.11/arm64": ("podman", True, "ready"),
    }
    versions = {h["name"]: h["docker_version"] for h in report["hosts"]}
    server = podman_engine.version()
    assert server is not None and versions["podman"] == server["Version"] != versions["docker"]
    assert podman_engine.labelled(f"ecoready.run={report['run_id']}") == EMPTY
    assert docker_labelled(f"ecoready.run={report['run_id']}") == EMPTY
