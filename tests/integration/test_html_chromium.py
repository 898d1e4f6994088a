"""The HTML report opened in a real browser: Debian's Chromium, headless, with networking
off, takes a screenshot; the screenshot shows the grid in each status's colour.

Chromium is a test-only package: `scripts/setup-host.sh --test` (run by `make test`)
installs it. Without it the test fails and says so, rather than hiding the gap."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ecoready.domain.model import Status
from ecoready.report import html
from ecoready.report.html import css_colour, tint
from tests.support.pngread import colour_counts
from tests.support.reports_sample import bench_report, lab_report


def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail("chromium is not installed: run `sudo scripts/setup-host.sh --test` (make test does it)")
    return found


def screenshot(page: Path, png: Path, profile: Path, height: int = 900) -> None:
    result = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            f"--window-size=1280,{height}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0 and png.exists(), result.stderr[-2000:]


def test_the_grid_shows_in_a_browser_screenshot(tmp_path: Path) -> None:
    report = lab_report("lab-mixed")  # a real lab run: ready, partial, broken, missing cells
    page = tmp_path / "report.html"
    page.write_text(html.render(report), encoding="utf-8")
    png = tmp_path / "grid.png"
    screenshot(page, png, tmp_path / "profile")
    width, height, counts = colour_counts(png)
    assert (width, height) == (1280, 900)
    assert len(counts) > 100, "the screenshot is (nearly) one colour: nothing was drawn"
    assert counts["#ffffff"] < width * height * 0.95
    for status in (Status.READY, Status.PARTIAL, Status.BROKEN, Status.MISSING):
        colour = css_colour(status)
        # each cell's solid left border and tinted background are on screen
        assert counts[colour] > 300, f"{status.value}: {colour} drawn on {counts[colour]} pixels"
        assert counts[tint(colour)] > 3000, f"{status.value}: cell background {tint(colour)} missing"


def test_bench_charts_render_in_the_browser(tmp_path: Path) -> None:
    page = tmp_path / "bench.html"
    page.write_text(html.render(bench_report()), encoding="utf-8")
    png = tmp_path / "bench.png"
    screenshot(page, png, tmp_path / "profile", height=1400)
    _, _, counts = colour_counts(png)
    # the native lines (amd64 blue, arm64 orange) and the emulated chart's hatching
    assert counts["#0969da"] > 200 and counts["#d4640c"] > 200
    assert counts["#d0d7de"] > 1000
