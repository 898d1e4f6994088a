"""Lab server containers started by hand, as a user of the image would (`docker run`), on a
network of the test's own: for the tests of the images' own contracts."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest

from tests.support.cli import TEST_LABEL_KEY, TEST_SESSION


@pytest.fixture
def network(no_leaks: None) -> Iterator[str]:
    """A network of this test's own; what runs on it goes with it (before the leak check)."""
    name = f"ecoready-test-{uuid.uuid4().hex[:8]}"
    label = f"{TEST_LABEL_KEY}={TEST_SESSION}"
    subprocess.run(["docker", "network", "create", "--label", label, name], check=True, capture_output=True)
    yield name
    ids = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"network={name}"], capture_output=True, text=True, check=True
    ).stdout.split()
    if ids:
        subprocess.run(["docker", "rm", "-fv", *ids], capture_output=True, check=False)
    subprocess.run(["docker", "network", "rm", name], capture_output=True, check=False)


def start(network: str, *args: str, name: str = "") -> str:
    label = f"{TEST_LABEL_KEY}={TEST_SESSION}"
    argv = ["docker", "run", "-d", "--label", label, "--network", network, *(["--name", name] if name else [])]
    return subprocess.run([*argv, *args], capture_output=True, text=True, check=True).stdout.strip()


def sql(
    container: str, statement: str, user: str = "root", password: str = "", database: str = "", tcp: bool = True
) -> str:
    """One statement with the image's own client (over TCP, or its socket: root@localhost
    logs in only there); stdout, or AssertionError."""
    where = ["-h127.0.0.1", "--protocol=TCP"] if tcp else []
    argv = ["docker", "exec", container, "mysql", *where, f"-u{user}", "-N", "-B"]
    argv += [f"-p{password}"] if password else ["--skip-password"]
    argv += [*([database] if database else []), "-e", statement]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise AssertionError(done.stderr.strip())
    return done.stdout.strip()


def until_ready(container: str, password: str = "", tries: int = 120, tcp: bool = True) -> None:
    for _ in range(tries):
        try:
            sql(container, "SELECT 1", password=password, tcp=tcp)
            if not tcp:  # a temporary server (init scripts) answers on the socket too: wait for the real one
                assert "port: 3306" in logs(container)
            return
        except AssertionError:
            state = subprocess.run(
                ["docker", "inspect", "-f", "{{.State.Running}}", container], capture_output=True, text=True
            ).stdout.strip()
            assert state == "true", logs(container)[-3000:]
            time.sleep(0.5)
    raise AssertionError(f"never ready: {logs(container)[-3000:]}")


def logs(container: str) -> str:
    shown = subprocess.run(["docker", "logs", container], capture_output=True, text=True)
    return shown.stdout + shown.stderr
