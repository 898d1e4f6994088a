"""Driver rows in the lab: drivers pinned in PyPI, npm, Maven Central and the Go module
proxy, installed into the lab's language runtime images on amd64 (native) and arm64
(emulated), then the smoke program against the default matrix's backend of the same row
(MySQL 9.7 with TLS and caching_sha2_password, or MariaDB 11.8), through the real engine,
the real registries and the real package registries: each is a default-matrix connector
row under the lab's names (tests/support/stand_in.py `IN_LAB`), run once, here. A second
run (the MariaDB row against MySQL) installs nothing; a source build without a compiler is
`broken` naming what is missing; a pin that names no published version and an image
without the smoke program are configuration errors naming the row."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ecoready.domain.codec import from_plain
from ecoready.domain.packaging import Packaging
from ecoready.matrix.load import load
from ecoready.report.status_words import packaging_text
from tests.support.cli import LAB_MATRIX, ecoready

pytestmark = pytest.mark.docker

ROWS = [c.id for c in load(LAB_MATRIX).components if "driver" in c.options]
# What each row's registry publishes for both lab arches (tests/integration/test_package_registries.py
# checks the verdicts against the registries' own file lists), and how it was installed.
EXPECTED = {
    "driver-python-mysqlclient": ("ready (built from source: needs gcc, python3-dev, pkg-config, libmariadb-dev)"),
    "driver-python-pymysql": "ready (pure-Python wheel)",
    "driver-python-mysql-connector": "ready (wheel)",
    "driver-nodejs-mysql2": "ready (pure JS)",
    "driver-java-mysql-connector-j": "ready (pure-Java jar)",
    "driver-java-mariadb-java-client": "ready (pure-Java jar)",
    "driver-go-mysql": "ready (pure Go)",
}
CHECKS = ["connect", "version", "prepared_utf8mb4", "rollback", "wrong_password"]
MYSQL_CHECKS = ["tls", "caching_sha2_password"]  # a MySQL backend's, said not applicable to MariaDB
BACKENDS = {c.id: c.backend for c in load(LAB_MATRIX).components}
SERVER = (
    '[[components]]\nid = "mariadb-10.11"\ncategory = "server"\nprobe = "server"\n'
    'image = "127.0.0.1:5000/lab/mariadb:10.11"\n\n'
)


def run(
    matrix: Path, reports: Path, *args: str, timeout: float = 3600
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    out = reports / f"report-{len(list(reports.glob('report-*.json')))}.json"
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--json", str(out), *args, timeout=timeout)
    report: dict[str, Any] = json.loads(out.read_text())
    return report, result


def row(tmp_path: Path, cid: str, image: str, options: str) -> Path:
    matrix = tmp_path / f"{cid}.toml"
    matrix.write_text(
        SERVER + f'[[components]]\nid = "{cid}"\ncategory = "connector"\nprobe = "connector"\n'
        f'image = "127.0.0.1:5000/lab/{image}"\nbackend = "mariadb-10.11"\noptions = {{ {options} }}\n'
    )
    return matrix


def checks_of(cell: dict[str, Any]) -> dict[str, dict[str, Any]]:
    smoke = [s for s in cell["stages"] if s["stage"] == "smoke"]
    return {c["name"]: c for c in smoke[0]["checks"]} if smoke else {}


def start_of(cell: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in cell["stages"] if s["stage"] == "start")


def test_driver_rows_are_ready_on_both_arches(lab_report: dict[str, Any]) -> None:
    assert sorted(ROWS) == sorted(EXPECTED)
    # the session's first run of these rows is the whole lab's (tests/conftest.py): on a
    # fresh machine it installed the drivers; the run against MySQL below finds them installed
    first = {"cells": [c for c in lab_report["cells"] if c["component"] in ROWS]}
    assert len(first["cells"]) == 2 * len(ROWS)
    for cell in first["cells"]:
        assert cell["status"] == "ready", (cell["id"], cell["detail"], lab_report["_stderr"][-3000:])
        packaging = cell["packaging"]
        assert [s["stage"] for s in cell["stages"]] == ["packaging", "image", "start", "smoke"]
        assert cell["emulated"] is (cell["arch"] == "arm64")
        assert packaging["arch"] == cell["arch"] and packaging["verdict"] == "ready"
        # the verdict as every view shows it, after the install
        assert packaging_text(from_plain(Packaging, packaging)) == EXPECTED[cell["component"]], packaging
        checks = checks_of(cell)
        passed = [k for k, c in checks.items() if c["outcome"] == "pass"]
        if BACKENDS[cell["component"]] == "mysql-9.7":
            assert passed == CHECKS + MYSQL_CHECKS, (cell["id"], checks)
            assert checks["tls"]["detail"].startswith("encrypted: TLS"), checks["tls"]
            sha2 = checks["caching_sha2_password"]["detail"]
            assert "full, then fast authentication" in sha2, (cell["id"], sha2)
            assert "9.7." in checks["version"]["detail"], checks["version"]
        else:  # against MariaDB: TLS and caching_sha2_password are MySQL's, and said to be so
            assert passed == CHECKS, (cell["id"], checks)
            assert {checks[k]["outcome"] for k in MYSQL_CHECKS} == {"skip"}
            assert checks["tls"]["detail"].startswith("not applicable: the backend is MariaDB")
            assert "MariaDB" in checks["version"]["detail"]
        assert "1045" in checks["wrong_password"]["detail"], (cell["id"], checks["wrong_password"])
    assert {BACKENDS[row] for row in ROWS} == {"mysql-9.7", "mariadb-11.8"}  # both sides of the checks above
    by_id = {c["id"]: c for c in first["cells"]}
    for arch in ("amd64", "arm64"):
        built = by_id[f"driver-python-mysqlclient/{arch}"]["packaging"]
        assert built["install"].startswith("built from source") and built["needs"][0] == "gcc"
        wheel = by_id[f"driver-python-mysql-connector/{arch}"]["packaging"]
        machine = {"amd64": "x86_64", "arm64": "aarch64"}[arch]
        assert wheel["install"].startswith("wheel (") and f"_{machine}.whl)" in wheel["install"], wheel
        assert (
            f"mysql2 {by_id[f'driver-nodejs-mysql2/{arch}']['packaging']['version']}"
            in (checks_of(by_id[f"driver-nodejs-mysql2/{arch}"])["connect"]["detail"])
        )  # the very version the packaging stage resolved is the one that ran
        go = by_id[f"driver-go-mysql/{arch}"]
        assert f"go-sql-driver/mysql {go['packaging']['version']}" in checks_of(go)["connect"]["detail"]
        assert "Python 3.13" in checks_of(by_id[f"driver-python-pymysql/{arch}"])["connect"]["detail"]


def _cache_images() -> list[str]:
    listed = subprocess.run(
        ["docker", "images", "--filter", "label=ecoready.cache=driver", "--format", "{{.Repository}}:{{.Tag}}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return listed.stdout.split()


def test_a_source_build_without_a_compiler_is_broken_and_says_what_is_missing(tmp_path: Path, no_leaks: None) -> None:
    # mysqlclient ships no aarch64 wheel; python:3.13-slim has no compiler (like upstream's)
    options = 'language = "python", driver = "pypi:mysqlclient==2.2.*"'
    matrix = row(tmp_path, "slim-mysqlclient", "python:3.13-slim", options)
    report, result = run(matrix, tmp_path, "--only", "slim-mysqlclient", "--arch", "arm64", timeout=1800)
    assert result.returncode == 1, result.stderr[-3000:]
    (cell,) = report["cells"]
    assert cell["status"] == "broken", cell
    packaging = cell["packaging"]
    assert packaging["verdict"] == "missing"
    assert packaging["install_kind"] == "failed", packaging
    assert packaging["install"].startswith("the image has no gcc, python3-dev, pkg-config, libmariadb-dev")
    assert cell["stages"][0]["stage"] == "packaging" and "source build (needs gcc" in cell["stages"][0]["detail"]
    assert "did not install: the image has no gcc, python3-dev, pkg-config, libmariadb-dev" in cell["detail"]
    summary = result.stdout + result.stderr
    assert "missing (no aarch64 build, source build failed: the image has no gcc" in summary


def test_a_pin_that_names_no_published_version_is_a_configuration_error(tmp_path: Path, no_leaks: None) -> None:
    matrix = row(tmp_path, "pin-nowhere", "python:3.13-slim", 'language = "python", driver = "pypi:PyMySQL==0.0.1"')
    report, result = run(matrix, tmp_path, "--only", "pin-nowhere", "--arch", "amd64", timeout=600)
    assert result.returncode == 3, result.stderr[-3000:]
    (cell,) = report["cells"]
    assert cell["status"] == "error"
    assert [s["stage"] for s in cell["stages"]] == ["packaging"]  # judged before any image or container
    assert "row pin-nowhere: pypi:PyMySQL==0.0.1: PyPI has no release of PyMySQL matching it" in cell["detail"]


@pytest.mark.parametrize(
    ("cid", "image", "options", "words"),
    [
        ("c-on-mariadb", "mariadb:10.11", 'language = "c"', "row c-on-mariadb: the image has no smoke-c on its PATH"),
        (
            "python-on-node",
            "node:24",
            'language = "python", driver = "pypi:PyMySQL"',
            # node's image has python3 (node-gyp), not its venv: it is no Python runtime image
            "row python-on-node: python3 cannot make a virtual environment (python3-venv)",
        ),
    ],
)
def test_an_image_not_of_the_row_s_runtime_is_a_configuration_error(
    tmp_path: Path, no_leaks: None, cid: str, image: str, options: str, words: str
) -> None:
    report, result = run(row(tmp_path, cid, image, options), tmp_path, "--only", cid, "--arch", "amd64", timeout=900)
    assert result.returncode == 3, result.stderr[-3000:]
    (cell,) = report["cells"]
    assert cell["status"] == "error" and words in cell["detail"], cell["detail"]
    assert start_of(cell)["outcome"] == "error"


@pytest.mark.slow
def test_against_mysql_the_drivers_do_tls_and_caching_sha2_password_with_the_lab_run_s_installs(
    lab_report: dict[str, Any], tmp_path: Path, no_leaks: None
) -> None:
    """The lab's driver rows whose backend is MariaDB (the others run against MySQL 9.7 in
    the whole-lab run), here against MySQL 9.7 on both arches (arm64 emulated), after the
    whole-lab run (tests/conftest.py): TLS and caching_sha2_password for those drivers too,
    in a second run of those rows, so it installs nothing."""
    lab_rows = {c.id: c for c in load(LAB_MATRIX).components if c.id in ROWS and BACKENDS[c.id] != "mysql-9.7"}
    assert lab_rows  # else the claim of a second run installing nothing has no test
    text = '[[components]]\nid = "mysql-9.7"\ncategory = "server"\nprobe = "server"\n'
    text += 'image = "127.0.0.1:5000/lab/mysql:9.7"\noptions = { flavor = "mysql" }\n'
    for cid, component in lab_rows.items():
        text += (
            f'\n[[components]]\nid = "{cid}"\ncategory = "connector"\nprobe = "connector"\n'
            f'image = "{component.image}"\nbackend = "mysql-9.7"\n'
            f'options = {{ language = "{component.options["language"]}", driver = "{component.options["driver"]}" }}\n'
        )
    matrix = tmp_path / "mysql.toml"
    matrix.write_text(text)
    report, result = run(matrix, tmp_path, "--only", ",".join(lab_rows), timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    cells = {c["id"]: c for c in report["cells"]}
    assert len(cells) == 2 * len(lab_rows)
    for cell in cells.values():
        arch = cell["arch"]
        assert cell["status"] == "ready" and cell["emulated"] is (arch == "arm64"), cell["detail"]
        checks = checks_of(cell)
        assert checks["tls"]["outcome"] == "pass" and checks["tls"]["detail"].startswith("encrypted: TLS"), checks
        sha2 = checks["caching_sha2_password"]
        assert sha2["outcome"] == "pass" and "full, then fast authentication" in sha2["detail"], (cell["id"], sha2)
        assert "1045" in checks["wrong_password"]["detail"], (cell["id"], checks["wrong_password"])
    # every install comes from the lab run's images, its time said only when it happened
    by_id = {c["id"]: c for c in lab_report["cells"] if c["component"] in ROWS}
    assert {i: c["packaging"]["cached"] for i, c in cells.items()} == {i: True for i in cells}
    for cell in cells.values():
        then, now = by_id[cell["id"]]["packaging"]["install"], cell["packaging"]["install"]
        assert then.startswith(now) and (then == now or then[len(now) :].startswith(" in ")), (then, now)
    assert len(_cache_images()) >= len(cells)  # kept by the engine, by label, across runs
