"""Finding the engine as the docker CLI does (DOCKER_HOST, the context, the well-known
sockets of each product), telling which engine answered and whether it runs on this
kernel, and the remedies said for each kind. The sockets here are real unix sockets bound
in a temporary folder; nothing connects to them."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import socket
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ecoready.domain.errors import EnvironmentProblem
from ecoready.engine.discovery import MAX_CONFIG_BYTES, EngineAddress, find_engine, kind_of_url
from ecoready.engine.engine_kinds import BY_KEY, DOCKER_ENGINE, KINDS, emulation_fix, kind_of_engine
from ecoready.engine.identity import identify, on_this_kernel
from ecoready.run.emulation import ASKED_AS, REMEMBER_SECONDS, EngineMemory


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    held: list[socket.socket] = []
    yield held
    for sock in held:
        sock.close()


def bind(path: Path, held: list[socket.socket]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    held.append(sock)
    return path


def context(config: Path, name: str, host: str, *, tls: bool = False) -> None:
    digest = hashlib.sha256(name.encode()).hexdigest()
    meta = config / "contexts" / "meta" / digest
    meta.mkdir(parents=True)
    endpoint = {"Host": host, "SkipTLSVerify": False}
    (meta / "meta.json").write_text(json.dumps({"Name": name, "Metadata": {}, "Endpoints": {"docker": endpoint}}))
    if tls:
        certs = config / "contexts" / "tls" / digest / "docker"
        certs.mkdir(parents=True)
        for file in ("ca.pem", "cert.pem", "key.pem"):
            (certs / file).write_text("x")


def env_of(home: Path, **more: str) -> dict[str, str]:
    return {"HOME": str(home), "XDG_RUNTIME_DIR": str(home / "run"), **more}


def test_docker_host_comes_first_with_its_tls_material(home: Path) -> None:
    found = find_engine(env_of(home, DOCKER_HOST="tcp://10.0.0.5:2376", DOCKER_TLS_VERIFY="1"), windows=False)
    assert (found.url, found.how, found.kind.key) == ("tcp://10.0.0.5:2376", "DOCKER_HOST", "remote")
    assert found.tls is not None and found.tls.ca == str(home / ".docker" / "ca.pem")
    plain = find_engine(env_of(home, DOCKER_HOST="unix:///run/podman/podman.sock"), windows=False)
    assert plain.tls is None and plain.kind.key == "podman"


def test_the_current_context_of_the_docker_config_is_used_and_said(home: Path) -> None:
    config = home / ".docker"
    config.mkdir()
    (config / "config.json").write_text(json.dumps({"currentContext": "colima", "auths": {}}))
    context(config, "colima", f"unix://{home}/.colima/default/docker.sock")
    found = find_engine(env_of(home), windows=False)
    assert found.url == f"unix://{home}/.colima/default/docker.sock"
    assert found.how == f"docker context colima (from {config / 'config.json'})"
    assert found.kind.key == "colima"
    # DOCKER_CONTEXT wins over the config, and DOCKER_CONFIG moves the config
    other = home / "elsewhere"
    context(other, "remote", "tcp://build.example:2376", tls=True)
    picked = find_engine(env_of(home, DOCKER_CONFIG=str(other), DOCKER_CONTEXT="remote"), windows=False)
    assert (picked.url, picked.how) == ("tcp://build.example:2376", "docker context remote (from DOCKER_CONTEXT)")
    assert picked.tls is not None and picked.tls.key.endswith("contexts/tls/" + sha("remote") + "/docker/key.pem")


def sha(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def test_a_context_that_does_not_exist_is_said_with_the_way_out(home: Path) -> None:
    with pytest.raises(EnvironmentProblem) as info:
        find_engine(env_of(home, DOCKER_CONTEXT="gone"), windows=False)
    assert "docker context 'gone' (from DOCKER_CONTEXT) does not exist" in str(info.value)
    assert "`docker context ls`" in str(info.value)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"{not json", "not valid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),
        (b" " * (MAX_CONFIG_BYTES + 1), "larger than"),
    ],
)
def test_a_broken_docker_config_is_named_not_a_traceback(home: Path, content: bytes, said: str) -> None:
    config = home / ".docker"
    config.mkdir()
    (config / "config.json").write_bytes(content)
    with pytest.raises(EnvironmentProblem) as info:
        find_engine(env_of(home), windows=False)
    assert str(config / "config.json") in str(info.value) and said in str(info.value)


def test_a_fifo_as_the_docker_config_is_refused_without_waiting(home: Path) -> None:
    config = home / ".docker"
    config.mkdir()
    os.mkfifo(config / "config.json")
    with pytest.raises(EnvironmentProblem, match="not a regular file"):
        find_engine(env_of(home), windows=False)


def test_the_default_context_falls_to_the_well_known_sockets_in_order(home: Path, sockets: list[socket.socket]) -> None:
    # the machine's own /var/run/docker.sock must not be seen: Docker Engine's socket is
    # moved into the test's folder
    moved = replace(DOCKER_ENGINE, sockets=("~/var-run-docker.sock",))
    kinds = (moved, *KINDS[1:])

    def find_engine_here(env: dict[str, str]) -> EngineAddress:
        return find_engine(env, windows=False, kinds=kinds)

    empty = find_engine_here(env_of(home))
    assert empty.url == f"unix://{home}/var-run-docker.sock" and empty.kind is moved
    assert f"{home}/.orbstack/run/docker.sock" in empty.tried and f"{home}/run/podman/podman.sock" in empty.tried
    bind(home / "run" / "podman" / "podman.sock", sockets)
    assert find_engine_here(env_of(home)).kind.key == "podman"
    bind(home / ".colima" / "default" / "docker.sock", sockets)
    colima = find_engine_here(env_of(home))
    assert (colima.kind.key, colima.how) == ("colima", "the well-known socket of Colima")
    (home / ".orbstack" / "run").mkdir(parents=True)
    (home / ".orbstack" / "run" / "docker.sock").write_text("a file, not a socket")
    assert find_engine_here(env_of(home)).kind.key == "colima"
    bind(home / ".docker" / "run" / "docker.sock", sockets)
    assert find_engine_here(env_of(home)).kind.key == "docker-desktop"
    bind(home / "var-run-docker.sock", sockets)
    first = find_engine_here(env_of(home))
    assert (first.kind, first.how, first.tried) == (moved, "the default socket", ())


def test_windows_uses_docker_desktops_pipe(home: Path) -> None:
    found = find_engine(env_of(home), windows=True)
    assert found.url == "npipe:////./pipe/docker_engine" and found.kind.key == "docker-desktop"


def test_the_engine_says_what_it_is() -> None:
    podman = {"Version": "4.3.1", "Components": [{"Name": "Podman Engine", "Version": "4.3.1"}]}
    assert kind_of_engine(podman, {}) is BY_KEY["podman"]
    assert (
        kind_of_engine({"Components": [{"Name": "Engine"}]}, {"OperatingSystem": "Docker Desktop"})
        is BY_KEY["docker-desktop"]
    )
    assert kind_of_engine({}, {"OperatingSystem": "OrbStack"}) is BY_KEY["orbstack"]
    assert kind_of_engine({}, {"Name": "colima"}) is BY_KEY["colima"]
    assert (
        kind_of_engine({}, {"SecurityOptions": ["name=seccomp,profile=builtin", "name=rootless"]})
        is BY_KEY["rootless-docker"]
    )
    assert kind_of_engine({"Components": "junk"}, {"SecurityOptions": 5}) is None
    address = EngineAddress("unix:///var/run/docker.sock", "the default socket", DOCKER_ENGINE)
    docker = identify(address, {"Version": "27.5.1", "Components": [{"Name": "Engine"}]}, {"NCPU": 8, "ID": "x"})
    assert docker.said() == "Docker Engine 27.5.1 at unix:///var/run/docker.sock (the default socket)"
    desktop = identify(address, {"Version": "27.5.1"}, {"OperatingSystem": "Docker Desktop", "NCPU": "9" * 5000})
    assert desktop.product == "Docker Desktop (engine 27.5.1)" and desktop.cpus == 0


def test_only_an_engine_on_this_very_kernel_is_read_here() -> None:
    release = platform.release()
    assert on_this_kernel("unix:///var/run/docker.sock", release)
    assert not on_this_kernel("unix:///Users/me/.docker/run/docker.sock", "6.10.14-linuxkit")  # Docker Desktop's VM
    assert not on_this_kernel("tcp://10.0.0.5:2376", release)
    assert not on_this_kernel("unix:///var/run/docker.sock", "")


def test_each_kind_has_its_own_remedies_and_none_is_a_make_target() -> None:
    for kind in (*KINDS, BY_KEY["remote"]):
        for text in (kind.start, kind.emulate.format(arch="arm64")):
            assert "make " not in text and "`make" not in text, (kind.key, text)
    assert "Rosetta" in emulation_fix("amd64", [BY_KEY["docker-desktop"]])
    both = emulation_fix("arm64", [DOCKER_ENGINE, DOCKER_ENGINE, BY_KEY["podman"]])
    assert both.count("tonistiigi/binfmt --install arm64") == 1 and "qemu-user-static" in both
    assert both.endswith("or add a native arm64 host under [[hosts]] (docs/hosts.md)")


def test_an_address_looks_like_its_product() -> None:
    assert kind_of_url("ssh://me@graviton").key == "remote"
    assert kind_of_url("unix:///run/podman/podman.sock").key == "podman"
    assert kind_of_url("unix:///srv/my/podman/podman.sock") is DOCKER_ENGINE  # only the engine can say
    said_nothing = identify(EngineAddress("unix:///run/podman/podman.sock", "DOCKER_HOST", BY_KEY["podman"]), {}, {})
    assert said_nothing.kind is DOCKER_ENGINE
    assert kind_of_url("unix:///srv/other.sock") is DOCKER_ENGINE


def test_what_an_engine_answered_is_remembered_a_week_and_forgotten_when_untrue(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "engines.json"
    memory = EngineMemory(path, now=1000.0)
    assert memory.known("engine-1", "arm64") is None
    memory.remember("engine-1", "arm64", ASKED_AS)
    assert EngineMemory(path, now=1000.0 + REMEMBER_SECONDS - 1).known("engine-1", "arm64") == ASKED_AS
    assert EngineMemory(path, now=1000.0 + REMEMBER_SECONDS + 1).known("engine-1", "arm64") is None  # stale
    assert EngineMemory(path, now=1000.0).known("engine-2", "arm64") is None  # another engine
    later = EngineMemory(path, now=1001.0)
    later.forget("engine-1", "arm64")
    assert EngineMemory(path, now=1001.0).known("engine-1", "arm64") is None
    memory.remember("", "arm64", ASKED_AS)  # an engine without an ID is never remembered
    assert json.loads(path.read_text()) == {"engine-1": {}}


@pytest.mark.parametrize("content", [b"[1, 2]", b"{broken", b'{"e": {"arm64": {"at": "x", "emulator": 5}}}'])
def test_a_damaged_memory_only_forgets(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "engines.json"
    path.write_bytes(content)
    assert EngineMemory(path).known("e", "arm64") is None
