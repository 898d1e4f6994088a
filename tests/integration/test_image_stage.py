"""The image stage of real runs on the lab's gaps: an arch found only under a vendor's
suffixed tag is pulled by that tag's digest and runs; a mislabelled image is a failure
that says so (broken, not missing); a missing arch is missing; the report carries the
registry as it was seen, and an unreachable registry gets one note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import ecoready

pytestmark = pytest.mark.docker


def test_gap_cells_end_as_their_image_says(lab_gaps: Path, no_leaks: None) -> None:
    result = ecoready(
        "run",
        "--headless",
        "--matrix",
        str(lab_gaps),
        "--only",
        "gap-mislabelled,gap-amd64-only,gap-suffix-only",
        "--arch",
        "arm64",
        "--json",
        "-",
    )
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    cells = {c["component"]: c for c in report["cells"]}
    assert cells["gap-mislabelled"]["status"] == "broken"
    assert cells["gap-mislabelled"]["detail"] == "mislabelled: the index says arm64, the image's config says amd64"
    assert [s["stage"] for s in cells["gap-mislabelled"]["stages"]] == ["image"]
    assert cells["gap-amd64-only"]["status"] == "missing"
    blames = {c: cells[c]["stages"][0]["blame"]["cause"] for c in ("gap-mislabelled", "gap-amd64-only")}
    assert blames == {"gap-mislabelled": "mislabelled-image", "gap-amd64-only": "not-published"}
    suffixed = cells["gap-suffix-only"]
    assert suffixed["status"] == "ready", suffixed
    assert suffixed["image"]["found_as"] == "tag 1-aarch64"
    assert suffixed["image"]["found_tag"] == "1-aarch64"  # the fact the plan and the TUI read
    assert suffixed["stages"][0]["detail"].startswith("tag 1-aarch64 sha256:")
    checks = {c["name"]: c for c in next(s for s in suffixed["stages"] if s["stage"] == "smoke")["checks"]}
    assert checks["arch"]["detail"] == "aarch64"  # the suffixed tag's image really is arm64
    (lab,) = report["registries"]
    assert lab["registry"] == "127.0.0.1:5000" and lab["requests"] > 0 and lab["error"] == ""
    assert not [n for n in report["notes"] if n["about"] is not None]


def test_an_unreachable_registry_gets_one_note_for_all_its_cells(tmp_path: Path, no_leaks: None) -> None:
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        "".join(
            f'[[components]]\nid = "far{i}"\ncategory = "server"\nprobe = "server"\n'
            f'image = "127.0.0.1:9/lab/mariadb-{i}:10.11"\n\n'
            for i in range(3)
        )
    )
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--json", "-")
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    assert {c["status"] for c in report["cells"]} == {"error"}
    notes = [n["text"] for n in report["notes"] if n["about"] == {"shared": "registry", "subject": "127.0.0.1:9"}]
    assert len(notes) == 1
    assert notes[0].startswith("registry 127.0.0.1:9: unreachable (connection refused)")
    assert notes[0].endswith(": 6 cells not checked")
    (far,) = report["registries"]
    assert far["registry"] == "127.0.0.1:9" and far["error"].startswith("unreachable")
