"""Writing files so that a reader sees the old content or the new, never a torn one."""

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
    if target.is_symlink():
        raise ReportError(f"{target}: refusing to write through a symlink")
    if base_dir is not None:
        base = base_dir.resolve()
        resolved = target.resolve() if target.is_absolute() else (base / target).resolve()
        if not resolved.is_relative_to(base):
            raise ReportError(f"{target}: outside the chosen directory {base}")
        target = resolved
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise ReportError(f"{target}: directory {parent} does not exist")
    if target.exists() and not target.is_file():
        if target.is_dir():
            raise ReportError(f"{target}: is a directory")
        # a device or a pipe (/dev/null, /dev/stdout, a FIFO): renaming over it would replace
        # the device node itself, so write to it directly (atomicity is a file's property)
        try:
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise ReportError(f"{target}: cannot write: {exc.strerror}") from None
        return target
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
    return target


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
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        return
    write_atomic(path, text if text.endswith("\n") else text + "\n")
