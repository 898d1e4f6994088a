"""Writing files so that a reader sees the old content or the new, never a torn one;
checking before a run that its report files can be written; and the state folder where a
run's JSON is kept when the file asked for could not be written at the end.

Every failure is a ReportError (one line, exit 2), never an OSError's traceback.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ecoready.domain.errors import ReportError


def write_atomic(path: str | Path, text: str, *, base_dir: Path | None = None) -> Path:
    """Write `text` to `path` through a same-directory temp file, fsync, rename, fsync dir.

    Refuses to write through a symlink, and outside `base_dir` when one is given.
    """
    target = Path(path)
    _folder_of(target)
    if base_dir is not None:
        base = base_dir.resolve()
        resolved = target.resolve() if target.is_absolute() else (base / target).resolve()
        if not resolved.is_relative_to(base):
            raise ReportError(f"{target}: outside the chosen directory {base}")
        target = resolved
    parent = _folder_of(target)
    if target.exists() and not target.is_file():
        # a device or a pipe (/dev/null, /dev/stdout, a FIFO): renaming over it would replace
        # the device node itself, so write to it directly (atomicity is a file's property)
        try:
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise ReportError(f"{target}: cannot write: {exc.strerror}") from None
        return target
    try:
        _replace(target, parent, text)
    except OSError as exc:
        raise ReportError(f"{target}: cannot write: {exc.strerror or exc}") from None
    return target


def _replace(target: Path, parent: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    try:
        # mkstemp makes 0600; a report is meant to be shared: keep the old file's mode, else
        # the mode open() would give a new file
        try:
            mode = target.stat().st_mode & 0o777
        except OSError:
            mode = 0o666 & ~_umask()
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:
        dir_fd = os.open(parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


def _umask() -> int:
    """The process umask, read without setting it (os.umask would race with other threads)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def write_output(path: str, text: str) -> None:
    """`-` means stdout (and nothing else goes there); anything else is written atomically."""
    if path == "-":
        try:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise ReportError(f"stdout: cannot write: {exc.strerror or exc}") from None
        return
    write_atomic(path, text if text.endswith("\n") else text + "\n")


def check_writable(path: str) -> None:
    """Refuse, before any work starts, a report path that could not be written at the end:
    a missing folder, a directory, a symlink, a folder where no file can be made (read-only,
    immutable, not ours). Devices and pipes are written as they are (`/dev/null`)."""
    if path == "-":
        return
    target = Path(path)
    parent = _folder_of(target)
    if target.exists() and not target.is_file():
        if not os.access(target, os.W_OK):
            raise ReportError(f"{target}: cannot write: permission denied")
        return
    check_folder_writable(parent, str(target))


def _folder_of(target: Path) -> Path:
    """The folder `target` is written in, refusing a symlink, a directory, a missing folder."""
    if target.is_symlink():
        raise ReportError(f"{target}: refusing to write through a symlink")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise ReportError(f"{target}: directory {parent} does not exist")
    if target.is_dir():
        raise ReportError(f"{target}: is a directory")
    return parent


def check_folder_writable(folder: Path, what: str) -> None:
    """A file can be made in `folder` (tried for real: as root, permission bits say
    nothing of a read-only mount or an immutable folder)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".ecoready-check.", suffix=".tmp", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ReportError(f"{what}: cannot write in {folder}: {exc.strerror or exc}") from None


def state_dir() -> Path:
    """$XDG_STATE_HOME/ecoready, else ~/.local/state/ecoready."""
    base = os.environ.get("XDG_STATE_HOME", "").strip()
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "state"
    return root / "ecoready"


def keep_in_state(name: str, text: str) -> Path:
    """`text` written as `<state folder>/reports/<name>` (the folder made private): where a
    run's report goes when the file asked for could not be written."""
    folder = state_dir() / "reports"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ReportError(f"{folder}: cannot create the state folder: {exc.strerror or exc}") from None
    return write_atomic(folder / name, text if text.endswith("\n") else text + "\n")
