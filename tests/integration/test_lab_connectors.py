"""The connector rows of the lab matrix on amd64 (native) and arm64 (emulated): each
language's driver against its real backend (MariaDB 10.11 or MySQL 9.7), through the real
engine and registry, as a user runs it; and a connector given the wrong password ends
`partial`, naming the checks."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ecoready.domain.specs import ExecResult
from ecoready.lab.recipes import IMAGES, image_tag
from ecoready.matrix.kinds import CONNECTOR_LANGUAGES
from ecoready.matrix.load import load
from ecoready.probes.connector import CHECKS, KILL_GRACE, LIMITED_RUN, parse_lines, unreported
from tests.support.cli import ecoready

pytestmark = pytest.mark.docker

# Debian's drivers, one row per language (`python` is only a driver row's: test_lab_drivers.py)
DEBIAN = [language for language in CONNECTOR_LANGUAGES if language != "python"]
ROWS = [f"connector-{language}" for language in DEBIAN]
# Drivers that only interpolate placeholders on the client (no server-side prepare at all).
CLIENT_SIDE = {"python-pymysql", "python-mysqlclient", "nodejs"}
# How each runtime names the CPU it runs on, where its connect detail says so.
RUNTIME_ARCH = {
    "amd64": {"go": "amd64", "java": "amd64", "nodejs": "x64", "ruby": "x86_64"},
    "arm64": {"go": "arm64", "java": "aarch64", "nodejs": "arm64", "ruby": "aarch64"},
}


def checks_of(cell: dict[str, Any]) -> dict[str, dict[str, Any]]:
    (smoke,) = [s for s in cell["stages"] if s["stage"] == "smoke"]
    return {c["name"]: c for c in smoke["checks"]}


@pytest.mark.parametrize("arch", ["amd64", "arm64"])
def test_every_connector_is_ready(lab: Path, lab_report: dict[str, Any], arch: str) -> None:
    # the connector rows of the session's whole-lab run (tests/conftest.py `lab_report`)
    backends = {component.id: component.backend for component in load(lab).components}
    cells = {c["component"]: c for c in lab_report["cells"] if c["component"] in ROWS and c["arch"] == arch}
    assert sorted(cells) == sorted(ROWS)
    not_ready = {cid: (c["status"], c["detail"], checks_of(c)) for cid, c in cells.items() if c["status"] != "ready"}
    assert not not_ready, not_ready
    for language in DEBIAN:
        cell = cells[f"connector-{language}"]
        assert cell["arch"] == arch and cell["emulated"] is (arch == "arm64")
        assert [s["stage"] for s in cell["stages"]] == ["image", "start", "smoke"]
        checks = checks_of(cell)
        assert tuple(checks) == CHECKS, (language, list(checks))
        assert all(c["outcome"] == "pass" for c in checks.values()), (language, checks)
        # each row's own backend answered: MariaDB 10.11, or MySQL 9.7 (lab.toml says which)
        expected_server = "9.7." if backends[cell["component"]] == "mysql-9.7" else "MariaDB"
        assert expected_server in checks["version"]["detail"], (language, checks["version"])
        prepared = checks["prepared_utf8mb4"]["detail"]
        assert "\U0001f42c" in prepared and "(20 bytes) round-tripped byte-exact" in prepared, prepared
        # honest about how the placeholders travelled, proven by the server's counter
        expected = "client-side placeholders" if language in CLIENT_SIDE else "server-side prepare"
        assert expected in prepared, (language, prepared)
        assert "1045" in checks["wrong_password"]["detail"]
        if language in RUNTIME_ARCH[arch]:  # the runtime really runs as the cell's arch
            assert RUNTIME_ARCH[arch][language] in checks["connect"]["detail"], checks["connect"]
    # the connector image was resolved per arch from the index, like every lab image
    assert {c["image"]["found_as"] for c in cells.values()} == {"index"}


def test_a_wrong_password_is_partial_and_names_the_failing_checks(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    literal = "not-the-backend-password-4711"
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        '[[components]]\nid = "mariadb-10.11"\ncategory = "server"\nprobe = "server"\n'
        'image = "127.0.0.1:5000/lab/mariadb:10.11"\n\n'
        '[[components]]\nid = "connector-wrong"\ncategory = "connector"\nprobe = "connector"\n'
        'image = "127.0.0.1:5000/lab/connectors:bookworm"\nbackend = "mariadb-10.11"\n'
        f'options = {{ language = "c", password = "{literal}" }}\n'
    )
    result = ecoready(
        "run", "--headless", "--matrix", str(matrix), "--only", "connector-wrong", "--arch", "amd64", "--json", "-"
    )
    assert result.returncode == 1, result.stderr
    (cell,) = json.loads(result.stdout)["cells"]
    assert cell["status"] == "partial", cell
    smoke = cell["stages"][-1]
    assert smoke["stage"] == "smoke" and smoke["outcome"] == "fail"
    assert smoke["detail"] == "failed: connect, version, prepared_utf8mb4, rollback"
    checks = checks_of(cell)
    assert "error 1045" in checks["connect"]["detail"] and "Access denied" in checks["connect"]["detail"]
    assert checks["version"]["detail"].startswith("not connected (error 1045")
    assert checks["wrong_password"]["outcome"] == "pass"  # the probe still works: only the credential is wrong
    # the literal is a secret like the generated ones: redacted everywhere
    assert literal not in result.stdout and literal not in result.stderr


def test_a_hanging_program_is_cut_off_and_keeps_what_it_reported(lab: Path) -> None:
    """The probe's wrapper in the real image: `timeout` ends a program that hangs, the
    lines it printed before survive, and the unreported checks say it was killed."""
    (image,) = [i for i in IMAGES if i.name == "connectors"]
    hang = 'echo \'{"check": "connect", "ok": true, "detail": "up"}\'; sleep 60'
    run = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            "--user",
            "nobody",
            image_tag(image, "amd64"),
            "sh",
            "-c",
            LIMITED_RUN,
            str(KILL_GRACE),
            "2",
            "sh",
            "-c",
            hang,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 124, run
    output = parse_lines(run.stdout)
    assert output.checks["connect"].ok
    detail = unreported("smoke-x", ExecResult(run.returncode, run.stdout, run.stderr, 2.0), 2)
    assert detail.startswith("smoke-x did not finish within 2 s (killed; a hang?)")
