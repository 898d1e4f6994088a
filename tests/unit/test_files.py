"""write_atomic: files are replaced atomically; devices and pipes are written, never replaced."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from ecoready.domain.errors import ReportError
from ecoready.report.files import write_atomic


def test_a_device_is_written_not_replaced() -> None:
    write_atomic("/dev/null", '{"report": true}\n')
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null must still be the character device"


def test_a_fifo_is_written_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    write_atomic(fifo, "through the pipe\n")
    reader.join(timeout=10)
    assert received == ["through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_file_is_replaced_and_a_directory_refused(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("old")
    write_atomic(target, "new")
    assert target.read_text() == "new" and not list(tmp_path.glob(".r.json.*"))
    with pytest.raises(ReportError, match="is a directory"):
        write_atomic(tmp_path, "x")
