"""The tag watch's history: `tags.jsonl` in the history folder, one JSON object per line and
one line per image reference and arch (`domain/tagwatch.TagRecord`), sorted, so a person
can read it and `grep` it.

Kept small and safe:
- bounded: at most `MAX_RECORDS` records (the longest unseen go first) and `MAX_BYTES`;
- written atomically (`report/files.write_atomic`): a check killed while writing leaves
  the previous history;
- one check at a time: the whole read-compare-write holds `tags.lock` (`flock`), so two
  checks that overlap (cron and a person, two watches) take turns and neither loses the
  other's records; a check that cannot get the lock in `LOCK_WAIT_S` says so (exit 3);
- a history that cannot be read (not JSON, a record that does not fit, over the bound) is
  said, set aside as `tags.jsonl.corrupt-<UTC time>`, and the check starts a new one.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from ecoready.domain.codec import from_plain, to_plain
from ecoready.domain.errors import ConfigError, DataError, EnvironmentProblem
from ecoready.domain.reading import read_if_there
from ecoready.domain.tagwatch import TagRecord
from ecoready.report.files import write_atomic

FILE = "tags.jsonl"
LOCK = "tags.lock"
MAX_RECORDS = 20_000  # references x arches; a matrix of hundreds of images stays far below
MAX_BYTES = 16 << 20
LOCK_WAIT_S = 60.0
_POLL_S = 0.1

Key = tuple[str, str]  # (reference, arch)


@contextmanager
def locked(directory: Path, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the history's lock (exclusive) while the block runs; waits up to `wait_s`."""
    try:
        fd = os.open(directory / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:  # a symlink in its place, a folder, no permission
        raise EnvironmentProblem(f"{directory / LOCK}: cannot open the lock: {exc.strerror or exc}") from None
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() >= deadline:
                    raise EnvironmentProblem(
                        f"{directory / LOCK}: another tag check has held the history for {wait_s:g} s; "
                        "try again when it ends"
                    ) from None
                time.sleep(_POLL_S)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def read(directory: Path, problems: list[str], *, aside: bool = True) -> dict[Key, TagRecord]:
    """The records of `directory`'s history (empty when there is none). One that cannot be
    read is said in `problems` and, with `aside` (a check, under the lock), set aside
    (renamed): the check starts afresh."""
    path = directory / FILE
    try:
        data = read_if_there(path, MAX_BYTES, "tag history")
        return {} if data is None else parse(data.decode("utf-8"), path.name)
    except (ConfigError, DataError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: cannot be read ({_why(exc)})" + (f"; {set_aside(path)}" if aside else ""))
        return {}


def _why(exc: Exception) -> str:
    if isinstance(exc, ConfigError):
        return "; ".join(p.message for p in exc.problems)
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    return str(exc)


def parse(text: str, where: str = FILE) -> dict[Key, TagRecord]:
    """The records of a history's text; DataError (`FILE:LINE: what`) for the first line that
    is not a record, and for a reference and arch recorded twice."""
    out: dict[Key, TagRecord] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            plain = json.loads(line)
        except ValueError:
            raise DataError(f"{where}:{n}", "not a JSON object") from None
        record = from_plain(TagRecord, plain, where=f"{where}:{n}")
        _check_times(record, f"{where}:{n}")
        key = (record.reference, record.arch)
        if key in out:
            raise DataError(f"{where}:{n}", f"{record.reference} {record.arch} is recorded twice")
        out[key] = record
    return out


def _check_times(record: TagRecord, where: str) -> None:
    for name in ("first_seen", "changed_at", "last_seen", "behind_since", "searched_at"):
        value = getattr(record, name)
        try:
            if value or name in ("changed_at", "last_seen"):
                datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise DataError(f"{where}: {name}", f"not a time: {value[:40]!r}") from None


def render(records: Mapping[Key, TagRecord]) -> str:
    """One line per record, sorted by reference and arch; the longest unseen beyond
    `MAX_RECORDS` left out."""
    kept = sorted(records.values(), key=lambda r: r.last_seen, reverse=True)[:MAX_RECORDS]
    lines = [json.dumps(to_plain(r), sort_keys=False) for r in sorted(kept, key=lambda r: (r.reference, r.arch))]
    return "".join(f"{line}\n" for line in lines)


def write(directory: Path, records: Mapping[Key, TagRecord]) -> Path:
    return write_atomic(FILE, render(records), base_dir=directory)


def set_aside(path: Path) -> str:
    """Rename an unreadable history out of the way (kept for a person to look at)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    try:
        os.replace(path, target)
    except OSError as exc:
        return f"could not set it aside ({exc.strerror or exc}): a new one replaces it"
    return f"set aside as {target.name}; a new history starts"
