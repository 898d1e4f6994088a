"""Files for containers written on the engine's own machine and bind-mounted read-only,
instead of copied in through the engine's archive API.

Each copy into a container (`put_archive`) makes the engine start a helper process of its
own binary that unpacks the tar in the container's root file system: about 40 ms of the
engine's CPU, one per container start and one per later file, about a tenth of the CPU a
whole lab run spends outside its containers. A directory written here and mounted at the
container's secrets directory costs a mount. It also keeps the secrets in memory: the
directories live on a tmpfs (/dev/shm), mode 0700, not in the engine's overlay layers on
disk.

This works only when the engine sees this machine's files at the same paths. `engine_pid`
finds the process at the other end of the engine's unix socket and `for_engine` accepts it
only when it is a `dockerd` that resolves our directory to the very same inode; anything
else (a remote engine, a VM behind a socket forwarder, ecoready in a container) gets None
and the archive API as before.

Layout: <root>/<pid>-<start>/<container name>/... . A process's directory goes with the
process: `FileDrop.sweep` removes those of processes that are gone (kill -9), as the engine sweep
removes their containers.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import struct
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from ecoready.domain.specs import SecretFile
from ecoready.engine.proc import process_start

SHM = Path("/dev/shm")  # noqa: S108 - a tmpfs on every Linux, the point is memory not disk


def default_root() -> Path:
    return SHM / f"ecoready-{os.getuid()}"


def engine_pid(socket_path: str, timeout: float = 2.0) -> int | None:
    """The pid, in our pid namespace, of the process serving a unix socket; None when it
    cannot be told (no such socket, another pid namespace reports 0, a system without
    Linux's peer credentials: macOS has no SO_PEERCRED, Windows no AF_UNIX in Python)."""
    family, peercred = getattr(socket, "AF_UNIX", None), getattr(socket, "SO_PEERCRED", None)
    if family is None or peercred is None:
        return None
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(socket_path)
            raw = sock.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    except OSError:
        return None
    pid = struct.unpack("3i", raw)[0]
    return pid if pid > 0 else None


def _same_file(ours: Path, theirs: Path) -> bool:
    try:
        a, b = ours.stat(), theirs.stat()
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


class FileDrop:
    """This process's directory of per-container file directories."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = root / f"{os.getpid()}-{process_start(os.getpid())}"

    @classmethod
    def for_engine(cls, socket_path: str, root: Path | None = None) -> FileDrop | None:
        """A FileDrop when the engine behind `socket_path` is a dockerd that sees `root`
        as we do; else None (then files go through the archive API)."""
        root = root or default_root()
        pid = engine_pid(socket_path)
        if pid is None:
            return None
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() != "dockerd":
                return None  # a forwarder (e.g. to a VM): its files are not the engine's
            _private_dir(root)
        except OSError:
            return None
        if not _same_file(root, Path(f"/proc/{pid}/root") / root.relative_to("/")):
            return None
        return cls(root)

    def directory(self, name: str) -> Path:
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"not a container name: {name!r}")
        return self.base / name

    def create(self, name: str, under: str, files: Iterable[SecretFile]) -> Path:
        """The directory to mount at `under` in container `name`, holding `files` (paths
        inside the container, all below `under`)."""
        _private_dir(self.root)
        _private_dir(self.base)
        target = self.directory(name)
        target.mkdir(mode=0o755, exist_ok=True)
        target.chmod(0o755)  # the container's users must reach the files; the parents keep others out
        self.write(name, under, files)
        return target

    def write(self, name: str, under: str, files: Iterable[SecretFile]) -> None:
        """Write (or replace) files in a container's directory; the container sees them at
        once through its mount."""
        target = self.directory(name)
        for f in files:
            path = target / relative_to(f.path, under)
            path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            # a file the container reads must never be seen half written: write aside, rename
            temporary = path.with_name(f".{path.name}.tmp")
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            try:
                os.write(fd, f.content)
                os.fchmod(fd, f.mode)
            finally:
                os.close(fd)
            os.replace(temporary, path)

    def remove(self, name: str) -> None:
        shutil.rmtree(self.directory(name), ignore_errors=True)

    def sweep(self, *, everything: bool = False) -> list[str]:
        """Remove the directories of processes that are gone (all but ours with
        `everything`); the names removed."""
        removed: list[str] = []
        with contextlib.suppress(OSError):
            for entry in self.root.iterdir():
                pid_text, _, start = entry.name.partition("-")
                if entry == self.base or not pid_text.isdigit():
                    continue
                if everything or process_start(int(pid_text)) != start:
                    shutil.rmtree(entry, ignore_errors=True)
                    removed.append(entry.name)
        return removed

    def tidy(self) -> None:
        """Remove this process's directory once no container directory is left in it."""
        with contextlib.suppress(OSError):
            self.base.rmdir()


def relative_to(path: str, under: str) -> PurePosixPath:
    """`path` below `under`, as a relative path; ValueError when it is not below it."""
    inner = PurePosixPath(path)
    if ".." in inner.parts:
        raise ValueError(f"{path}: '..' is not allowed in a container file path")
    return inner.relative_to(under)


def below(path: str, under: str) -> bool:
    try:
        relative_to(path, under)
    except ValueError:
        return False
    return True


def _private_dir(path: Path) -> None:
    """Make `path` a directory only we can enter; OSError when it is someone else's or
    not a plain directory (/dev/shm is world-writable: it could be a planted symlink)."""
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise PermissionError(f"{path} is not a directory of ours")
    path.chmod(0o700)
