"""Stored reports of scheduled checks: one JSON file per run in a history folder.

File names are `<UTC start>-<run id>.json` (`20261121T224950Z-6f9b22f2a1c0.json`): safe
on every file system, and sorting them by name sorts them by time. Files are written
atomically inside the folder (never through a symlink, never outside it), so a check
killed while storing leaves the previous history intact.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ecoready.domain.errors import ReportError
from ecoready.domain.model import CellResult, Report, Status
from ecoready.report import json as json_report
from ecoready.report.files import check_folder_writable, write_atomic
from ecoready.report.load import load_report

NAME = re.compile(r"^(\d{8}T\d{6}Z)-([0-9a-f]{1,32})\.json\Z")
STALE_TEMP_SECONDS = 3600
LOOK_BACK = 50  # stored reports searched for a cell's last judged status
UNJUDGED = frozenset({Status.ERROR, Status.SKIPPED, Status.PENDING, Status.RUNNING})


def default_dir() -> Path:
    """$XDG_DATA_HOME/ecoready/history, else ~/.local/share/ecoready/history."""
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share"
    return root / "ecoready" / "history"


def file_name(report: Report) -> str:
    digits = re.sub(r"[^0-9]", "", report.started_at)[:14].ljust(14, "0")
    run = re.sub(r"[^0-9a-f]", "", report.run_id.lower())[:12] or "0"
    return f"{digits[:8]}T{digits[8:14]}Z-{run}.json"


def prepare(directory: Path) -> Path:
    """The history folder, created private (0700) if needed and checked writable (before a
    check runs anything); a symlinked folder is refused."""
    if directory.is_symlink():
        raise ReportError(f"{directory}: the history folder is a symlink; give its real path")
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ReportError(f"{directory}: cannot create the history folder: {exc.strerror or exc}") from None
    if not directory.is_dir():
        raise ReportError(f"{directory}: not a folder")
    check_folder_writable(directory, "the history folder")
    return directory


def store(report: Report, directory: Path) -> Path:
    """Write `report` into the history folder (atomically) and return its path."""
    prepare(directory)
    _remove_stale_temp_files(directory)
    return write_atomic(file_name(report), json_report.render(report), base_dir=directory)


def _remove_stale_temp_files(directory: Path) -> None:
    """Temp files of writers that were killed (kill -9 cannot clean up after itself)."""
    cutoff = time.time() - STALE_TEMP_SECONDS
    for path in directory.glob(".*.json.*.tmp"):
        try:
            if not path.is_symlink() and path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:
            pass


def entries(directory: Path) -> list[Path]:
    """Stored report files, oldest first (other files in the folder are ignored)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if NAME.match(p.name) and p.is_file() and not p.is_symlink())


@dataclass(frozen=True)
class Stored:
    path: Path
    report: Report


def newest_first(
    directory: Path, problems: list[str], exclude: Path | None = None, before: str | None = None
) -> Iterator[Stored]:
    """Readable stored reports, newest first; unreadable ones are noted in `problems`.
    `before`: only those whose file name sorts before it (started earlier)."""
    for path in reversed(entries(directory)):
        if (exclude is not None and path == exclude) or (before is not None and path.name >= before):
            continue
        try:
            yield Stored(path, load_report(path))
        except ReportError as exc:
            problems.append(f"skipped {exc}")


def previous(
    directory: Path, problems: list[str], exclude: Path | None = None, before: str | None = None
) -> Stored | None:
    """The newest readable stored report (other than `exclude`; started before `before`, a
    file name, when given)."""
    return next(newest_first(directory, problems, exclude, before), None)


def newest_name(directory: Path) -> str | None:
    """The file name of the newest stored report, readable or not."""
    stored = entries(directory)
    return stored[-1].name if stored else None


def last_judged(
    directory: Path, latest: Stored, problems: list[str], exclude: Path | None = None
) -> dict[str, CellResult]:
    """For each cell `latest` did not judge (error, skipped, unfinished): its last judged
    result in older stored reports.

    The diff uses these to decide regressions: without them, ready -> error (an
    infrastructure blip) -> broken would never count as one, since error -> broken is not.
    """
    waiting = {k for k, c in latest.report.cells.items() if c.status in UNJUDGED}
    found: dict[str, CellResult] = {}
    for n, older in enumerate(newest_first(directory, problems, exclude, before=latest.path.name)):
        if not waiting or n >= LOOK_BACK:
            break
        if older.path == latest.path:
            continue
        for cell_id in list(waiting):
            cell = older.report.cells.get(cell_id)
            if cell is not None and cell.status not in UNJUDGED:
                found[cell_id] = cell
                waiting.discard(cell_id)
    return found
