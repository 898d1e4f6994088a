"""The house rule on module size: no module of app/ or probes/ over 500 lines.

A module that grows past it is split along a seam a newcomer can name (docs/architecture.md
lists the modules of each subpackage). Counted as `wc -l` counts, on the source files.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 500
FOLDERS = ("app", "probes")


def line_counts(root: Path, folders: tuple[str, ...] = FOLDERS) -> dict[str, int]:
    """Lines of every Python module under `folders` of `root`, by its path from `root`."""
    return {
        path.relative_to(root).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for folder in folders
        for path in sorted((root / folder).rglob("*.py"))
    }


def too_long(counts: dict[str, int]) -> dict[str, int]:
    return {path: lines for path, lines in counts.items() if lines > MAX_LINES}


def test_no_module_over_500_lines() -> None:
    over = too_long(line_counts(ROOT))
    assert not over, "modules over 500 lines (split each along a seam): " + ", ".join(
        f"{path} ({lines} lines)" for path, lines in sorted(over.items())
    )


def test_the_count_names_a_module_one_line_over(tmp_path: Path) -> None:
    (tmp_path / "app" / "sub").mkdir(parents=True)
    (tmp_path / "probes").mkdir()
    (tmp_path / "app" / "sub" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "app" / "just.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "probes" / "other.txt").write_text("x\n" * 900)  # not a module
    counts = line_counts(tmp_path)
    assert counts == {"app/just.py": MAX_LINES, "app/sub/long.py": MAX_LINES + 1}
    assert too_long(counts) == {"app/sub/long.py": MAX_LINES + 1}
