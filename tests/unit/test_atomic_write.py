"""Report files are written atomically: a writer killed (SIGKILL) in the middle of writing
leaves the old file or the new one, never a partial one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.cli import ROOT

SIZE = 48 << 20  # big enough that writing and syncing it takes a while to interrupt
WRITER = """
import sys
from ecoready.report.files import write_output
write_output(sys.argv[1], sys.argv[2] * {size})
"""


def kill_while_writing(target: Path, fill: str) -> bool:
    """Start a writer of `fill` * SIZE into `target`; SIGKILL it as soon as its temp file
    appears. True when it was killed mid-write (the temp file was still there)."""
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER.format(size=SIZE), str(target), fill],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and writer.poll() is None:
            temps = [p for p in target.parent.iterdir() if p.name.startswith(f".{target.name}.")]
            if temps:
                writer.send_signal(signal.SIGKILL)
                break
        writer.wait(timeout=60)
    finally:
        if writer.poll() is None:
            writer.kill()
    return writer.returncode == -signal.SIGKILL


def test_a_killed_writer_leaves_the_old_file_or_the_new_one(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("A" * SIZE)
    killed_midway = 0
    for fill in "BCDE":
        before = target.read_text()
        killed = kill_while_writing(target, fill)
        after = target.read_text()
        # whole old or whole new content, never a mix or a truncated file
        assert after in (before, fill * SIZE), f"partial file: {len(after)} bytes, starts {after[:1]!r}"
        if killed and after == before:
            killed_midway += 1
    assert killed_midway >= 1, "the writer was never caught mid-write: the test proved nothing"


def test_a_finished_write_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    target.write_text("old\n")
    target.chmod(0o640)
    result = subprocess.run(
        [sys.executable, "-c", WRITER.format(size=3), str(target), "new "], cwd=ROOT, timeout=60, check=True
    )
    assert result.returncode == 0
    assert target.read_text() == "new new new \n"
    assert oct(target.stat().st_mode & 0o777) == "0o640"  # the old file's mode is kept
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]  # no temp file left behind
