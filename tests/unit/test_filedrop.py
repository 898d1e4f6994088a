"""app/engine/filedrop.py: container files written on this machine for a read-only bind mount."""

from __future__ import annotations

import os
import socket
import stat
import threading
from pathlib import Path

import pytest

from ecoready.domain.specs import SecretFile
from ecoready.engine.filedrop import FileDrop, below, engine_pid, relative_to
from ecoready.engine.proc import process_start

UNDER = "/run/ecoready"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_land_below_the_container_directory_with_their_modes(tmp_path: Path) -> None:
    drop = FileDrop(tmp_path / "root")
    files = [SecretFile(f"{UNDER}/root-password", b"s3cret"), SecretFile(f"{UNDER}/sysbench/client.cfg", b"x", 0o400)]
    target = drop.create("ecoready-abc-cell-server", UNDER, files)
    assert target == drop.base / "ecoready-abc-cell-server"
    assert (target / "root-password").read_bytes() == b"s3cret"
    assert mode(target / "root-password") == 0o444
    assert mode(target / "sysbench" / "client.cfg") == 0o400
    assert mode(target) == 0o755  # the container's users reach the files ...
    assert mode(drop.base) == 0o700 and mode(drop.root) == 0o700  # ... other users of this machine do not
    assert not [p for p in target.rglob("*") if p.name.endswith(".tmp")]


def test_a_later_write_replaces_a_read_only_file(tmp_path: Path) -> None:
    drop = FileDrop(tmp_path / "root")
    drop.create("c1", UNDER, [SecretFile(f"{UNDER}/a.cnf", b"old")])
    drop.write("c1", UNDER, [SecretFile(f"{UNDER}/a.cnf", b"new"), SecretFile(f"{UNDER}/b.sql", b"select 1")])
    assert (drop.directory("c1") / "a.cnf").read_bytes() == b"new"
    assert (drop.directory("c1") / "b.sql").read_bytes() == b"select 1"


def test_remove_and_tidy_leave_nothing(tmp_path: Path) -> None:
    drop = FileDrop(tmp_path / "root")
    drop.create("c1", UNDER, [SecretFile(f"{UNDER}/a", b"1")])
    drop.create("c2", UNDER, [])
    drop.remove("c1")
    drop.tidy()
    assert drop.base.exists()  # c2 is still there
    drop.remove("c2")
    drop.tidy()
    assert not drop.base.exists()


@pytest.mark.parametrize("path", ["/etc/passwd", f"{UNDER}/../../etc/passwd", "/run/ecoready-other/x"])
def test_paths_outside_the_directory_are_refused(tmp_path: Path, path: str) -> None:
    assert not below(path, UNDER)
    with pytest.raises(ValueError):
        relative_to(path, UNDER)
    drop = FileDrop(tmp_path / "root")
    with pytest.raises(ValueError):
        drop.create("c1", UNDER, [SecretFile(path, b"x")])


@pytest.mark.parametrize("name", ["", "../escape", "a/b", ".hidden"])
def test_container_names_that_are_not_plain_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError):
        FileDrop(tmp_path).directory(name)


def test_a_planted_symlink_is_not_used_as_the_root(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "root").symlink_to(elsewhere)
    with pytest.raises(PermissionError):
        FileDrop(tmp_path / "root").create("c1", UNDER, [SecretFile(f"{UNDER}/a", b"1")])
    assert not list(elsewhere.iterdir())


def test_sweep_removes_the_directories_of_processes_that_are_gone(tmp_path: Path) -> None:
    mine = FileDrop(tmp_path)
    mine.create("c1", UNDER, [])
    reused_pid = tmp_path / f"{os.getpid()}-1"  # our pid, another start time: a process gone
    gone = tmp_path / "999999999-123"
    alive = tmp_path / f"1-{process_start(1)}"
    for path in (reused_pid, gone, alive, tmp_path / "not-a-process"):
        (path / "c").mkdir(parents=True)
    assert sorted(mine.sweep()) == sorted([reused_pid.name, gone.name])
    assert alive.exists() and mine.base.exists() and (tmp_path / "not-a-process").exists()
    assert mine.sweep(everything=True) == [alive.name]
    assert mine.base.exists()  # never our own


def test_engine_pid_is_the_process_serving_the_socket(tmp_path: Path) -> None:
    path = str(tmp_path / "engine.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        server.listen(1)
        accept = threading.Thread(target=lambda: server.accept()[0].close())
        accept.start()
        assert engine_pid(path) == os.getpid()
        accept.join(5)
        # a process that is not dockerd (a forwarder to a VM, say) is not trusted with paths
        assert FileDrop.for_engine(path, tmp_path / "root") is None
    assert engine_pid(str(tmp_path / "absent.sock")) is None
