"""Every table fits the terminal: at 80 columns fewer columns or wrapped rows, never a line
wider, never a glyph or the emulated mark cut; wide terminals get every column. The width
comes from COLUMNS (checked through the installed command too)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ecoready.domain.drivers import DriverCheck, DriversReport
from ecoready.domain.images import Availability, ImageCheck, ImagesReport, Verdict
from ecoready.domain.model import Report
from ecoready.domain.packaging import Packaging, PackagingVerdict
from ecoready.report import drivers_table, images_table
from ecoready.report.status_words import EMULATED_MARK, GLYPH, shows_emulated
from ecoready.report.text_grid import render_grid, render_summary
from ecoready.report.width import fit_table
from tests.support.reports_sample import DATA, lab_report

EXE = Path(sys.executable).with_name("ecoready")
LONG = "no x86_64 wheel (wheels only for win_amd64); mysqlclient-2.2.8.tar.gz has native sources (src/MySQLdb/_mysql.c)"


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def four_arches(report: Report) -> Report:
    """The report with two more arches (copies of arm64's cells): four columns to share."""
    cells = dict(report.cells)
    for arch in ("ppc64le", "s390x"):
        for cell in report.cells.values():
            if cell.arch == "arm64":
                cells[f"{cell.component}/{arch}"] = replace(cell, id=f"{cell.component}/{arch}", arch=arch)
    return replace(report, arches=(*report.arches, "ppc64le", "s390x"), cells=cells)


@pytest.mark.parametrize("name", ["lab-mixed", "lab-audit"])
def test_the_headless_grid_fits_80_columns_and_keeps_every_mark(name: str) -> None:
    for report in (lab_report(name), four_arches(lab_report(name))):
        grid = render_grid(report, 80)
        assert widest(grid) <= 80, grid
        marks = sum(1 for c in report.cells.values() if shows_emulated(c))
        assert grid.count(EMULATED_MARK) == marks  # every emulated cell keeps its mark, no other has one
        for cell in report.cells.values():  # every cell keeps its glyph
            assert GLYPH[cell.status] in grid
        wide = render_grid(report, 200)
        assert widest(wide) <= 200 and wide.count(EMULATED_MARK) == marks


def test_a_narrow_grid_puts_the_arches_in_blocks_rather_than_cut_them() -> None:
    report = four_arches(lab_report("lab-mixed"))
    grid = render_grid(report, 60)
    assert widest(grid) <= 60
    headers = [line for line in grid.splitlines() if line.startswith("component")]
    assert len(headers) >= 2  # wrapped: a second block of columns below the first
    assert all(arch in grid for arch in ("amd64", "arm64", "ppc64le", "s390x"))


def test_the_summary_says_the_mark_only_when_a_cell_shows_it() -> None:
    report = lab_report("lab-mixed")
    ghost = report.cells["ghost/arm64"]
    assert ghost.emulated and not shows_emulated(ghost)  # missing: it never ran
    assert EMULATED_MARK not in render_grid(replace(report, cells={"ghost/arm64": ghost}), 80)
    assert f"({EMULATED_MARK} = emulated)" in render_summary(report)


def images_report() -> ImagesReport:
    checks = []
    for component in ("mariadb-10.11", "a-component-with-a-long-name-for-a-row", "proxysql-2.7"):
        for arch in ("amd64", "arm64"):
            found = Availability(
                f"docker.io/library/{component}:1",
                arch,
                Verdict.AVAILABLE if arch == "amd64" else Verdict.MISSING,
                "docker.io",
                digest="sha256:" + "ab" * 32,
                size=123_456_789,
                found_as="index",
                detail="the index publishes amd64, s390x; no tag 1-aarch64 or 1-arm64 either, searched 40 tags",
            )
            checks.append(ImageCheck(component, component, arch, found))
    return ImagesReport("m.toml", "2026-11-27T00:00:00Z", 1.0, tuple(checks))


def drivers_report() -> DriversReport:
    checks = []
    for spec, verdict in (
        ("pypi:mysqlclient==2.2.*", PackagingVerdict.SOURCE),
        ("npm:mysql2@3", PackagingVerdict.READY),
    ):
        for arch in ("amd64", "arm64"):
            packaging = Packaging(
                spec, spec.split(":")[0], spec, "2.2.8", arch, verdict, needs=("gcc", "python3-dev"), detail=LONG
            )
            checks.append(DriverCheck(spec, arch, packaging=packaging))
    return DriversReport("2026-11-27T00:00:00Z", 0.5, tuple(checks))


@pytest.mark.parametrize(
    ("render", "make"), [(images_table.render_table, images_report), (drivers_table.render_table, drivers_report)]
)
def test_images_and_drivers_fit_80_columns_with_nothing_lost(render: Any, make: Any) -> None:
    report = make()
    narrow = render(report, 80)
    assert widest(narrow) <= 80, narrow
    wide = render(report, 250)
    assert widest(wide) > 80  # a wide terminal gets the columns a narrow one left out
    words = " ".join(narrow.split())
    # the free text is wrapped, not cut: every word of it is there
    free = LONG if make is drivers_report else "searched 40 tags"
    assert all(word in words for word in free.split())


def test_fit_table_drops_the_columns_named_first_then_wraps() -> None:
    header = ("a", "b", "c", "text")
    rows = [("x" * 20, "y" * 20, "z" * 20, "one two three " * 10)]
    lines = fit_table(header, rows, 80, droppable=(1,))
    assert max(map(len, lines)) <= 80 and "y" * 20 not in "\n".join(lines)
    assert "x" * 20 in lines[2] and "z" * 20 in lines[2]


def test_the_installed_commands_read_the_width_from_columns(tmp_path: Path) -> None:
    report = four_arches(lab_report("lab-mixed"))
    from ecoready.report import json as json_report

    saved = tmp_path / "r.json"
    saved.write_text(json_report.render(report))
    for columns in ("80", "200"):
        env = {**os.environ, "COLUMNS": columns}
        shown = subprocess.run([str(EXE), "report", str(saved)], capture_output=True, text=True, env=env, timeout=60)
        assert shown.returncode in (0, 1), shown.stderr
        grid = shown.stdout[shown.stdout.index("\ncomponent ") + 1 :].split("\n\n")[0]
        assert widest(grid) <= int(columns), grid
    assert DATA.is_dir()
