"""Reading a file someone else controls: the one bounded reader every file ecoready reads
goes through (matrices, compose files and manifests, saved reports and the history, the
docker config, ecoready's own state files).

A path is opened without waiting (`O_NONBLOCK`: a FIFO with no writer does not hang the
open), then asked what it is (`fstat` on the open file, so what is read is what was asked):
anything but a regular file (a FIFO, a device, a socket, a directory) is refused at once,
since its size says nothing and reading it may never end. A regular file is read up to a
bound on bytes. What breaks a rule is a `ConfigError` naming the file and the rule
(`file:1:1: ...`, exit 2); callers with their own error keep its words.

Parsers add their own bounds on what the bytes become (depth, alias expansion in YAML,
digits in a number): `MAX_DIGITS` and `number_position` are shared here.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ecoready.domain.errors import ConfigError, Problem

# the longest number any file ecoready reads may hold: Python's own bound on turning text
# into an integer (sys.get_int_max_str_digits' default), said as the file's fault
MAX_DIGITS = 4300
_LONG_NUMBER = re.compile(rf"[0-9]{{{MAX_DIGITS + 1},}}")
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def kind_of_file(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def refused(path: str | Path, message: str, line: int = 1, col: int = 1) -> ConfigError:
    return ConfigError([Problem(str(path), line, col, message)])


def read_bounded(path: str | Path, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them; ConfigError
    (`file:1:1: why`) for a missing file, a special file or one larger than `limit`."""
    data = read_if_there(path, limit, what)
    if data is None:
        raise refused(path, "cannot read: no such file")
    return data


def read_head(path: str | Path, limit: int, what: str = "file") -> bytes:
    """The first `limit` bytes of the regular file at `path` (all of it when smaller), to
    tell what a file is before reading it under that kind's bound; ConfigError as
    `read_bounded`."""
    data = read_if_there(path, limit, what, head=True)
    if data is None:
        raise refused(path, "cannot read: no such file")
    return data


def read_if_there(path: str | Path, limit: int, what: str = "file", *, head: bool = False) -> bytes | None:
    """`read_bounded`, but None when there is no file at `path` (`head`: its first `limit`
    bytes, a larger file not refused)."""
    file = str(path)
    try:
        fd = os.open(file, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise refused(file, f"is a directory, not a {what}") from None
    except OSError as exc:
        raise refused(file, f"cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refused(file, f"is {kind_of_file(info.st_mode)}, not a regular file: not a {what}")
        if info.st_size > limit and not head:
            raise refused(file, f"is {info.st_size} bytes, larger than the bound: a {what} is at most {limit} bytes")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:  # a file that grows while read is still bounded
            # the size fstat gave in one read (one buffer, not chunks joined: a large file is
            # held once), then 1 MiB at a time for a file that grows
            chunk = os.read(fd, min(max(info.st_size + 1 - size, 1 << 20), limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit and head:
            return b"".join(chunks)[:limit]
        if size > limit:
            raise refused(file, f"grew while read, larger than the bound: a {what} is at most {limit} bytes")
        return b"".join(chunks)
    except OSError as exc:
        raise refused(file, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_text_bounded(path: str | Path, limit: int, what: str = "file") -> str:
    """`read_bounded` as UTF-8 text; a byte that is not UTF-8 is said at its line:col."""
    data = read_bounded(path, limit, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = position(data, exc.start)
        raise refused(path, f"not UTF-8 text: not a {what}", line, col) from None


def position(data: bytes | str, offset: int) -> tuple[int, int]:
    """(line, column), both from 1, of `offset` in `data`."""
    newline = b"\n" if isinstance(data, bytes) else "\n"
    line = data.count(newline, 0, offset) + 1  # type: ignore[arg-type]
    col = offset - (data.rfind(newline, 0, offset) + 1) + 1  # type: ignore[arg-type]
    return line, col


def number_position(text: str) -> tuple[int, int, int] | None:
    """(line, column, digits) of the first number longer than `MAX_DIGITS` in `text`, to
    say where a parser's `ValueError` about one came from; None when there is none."""
    match = _LONG_NUMBER.search(text)
    if match is None:
        return None
    line, col = position(text, match.start())
    return line, col, match.end() - match.start()


def too_many_digits(file: str, text: str, exc: Exception) -> ConfigError:
    """The problem a parser's ValueError about a huge number is, at its place."""
    where = number_position(text)
    if where is None:
        return refused(file, f"cannot parse: {str(exc)[:120]}")
    line, col, digits = where
    return refused(file, f"a number of {digits} digits; at most {MAX_DIGITS} are read", line, col)
