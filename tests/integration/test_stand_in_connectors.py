"""The default matrix's connector rows, unchanged, through a registry mirror pointed at the
lab's Docker Hub stand-in, on both arches (arm64 emulated): the official runtime image
names (python:3.13-slim and 3.13, node:24, eclipse-temurin:21, golang:1.27) served by the
lab's Debian builds of those lines, each driver pinned in its own registry (PyPI, npm,
Maven Central, the Go module proxy) and installed into the image, and PHP, Perl, Ruby, C
and C++ from Debian's packages on debian:trixie-slim (apt), the smoke program put in
from ecoready's package (compiled there for Go and Java): nothing of ecoready's is in the
images. Every cell `ready`, TLS and caching_sha2_password checked against MySQL 9.7 (the
registry rows' smoke programs); Oracle's Connector/Node.js over the X Protocol, on the X
Plugin's port, its prepared statement proved from the X Plugin's counters.

The rows whose cells the whole-lab run runs as they are (`IN_LAB`: the same image, driver
and backend under the lab's names) are checked there, in test_lab_drivers.py, and their
twins by test_stand_in.py; this run has the others."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from ecoready.lab.recipes import REGISTRY, STAND_IN
from ecoready.probes import smoke
from tests.support.stand_in import CONNECTOR_ROWS as ROWS
from tests.support.stand_in import IN_LAB, RUN_CONNECTORS

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUNTIMES = {
    "library/python": "3.13",
    "library/node": "24",
    "library/eclipse-temurin": "21",
    "library/golang": "1.27",
    "library/debian": "trixie-slim",  # PHP, Perl, Ruby, C and C++: Debian's packages (deb:)
}
CHECKS = ["connect", "version", "prepared_utf8mb4", "rollback", "wrong_password"]
X_DEVAPI = "connector-nodejs-xdevapi"  # Oracle's Connector/Node.js: the X Protocol only
MYSQL_CHECKS = ["tls", "caching_sha2_password"]
# ecoready's smoke programs, their compiled forms and the lab's launchers, by file name (a
# file of that name in an image is ours when it names ecoready: Go's own tests have a smoke.go)
NAMES = " -o ".join(f"-name {n}" for n in (*smoke.FILES.values(), "smoke-go", "smoke-java", "EcoreadySmoke.class"))


def checks_of(cell: dict) -> dict[str, dict]:
    smoke = [s for s in cell["stages"] if s["stage"] == "smoke"]
    return {c["name"]: c for c in smoke[0]["checks"]} if smoke else {}


def test_the_rows_are_on_official_runtime_images_with_nothing_of_ours_in_them() -> None:
    assert len(ROWS) >= 15 and X_DEVAPI in {row.id for row in ROWS}
    for row in ROWS:
        assert not row.image.startswith(REGISTRY), row.id
    for image in {row.image for row in ROWS}:
        repo, _, tag = image.partition(":")
        assert tag.startswith(RUNTIMES[f"library/{repo}"]), image
        # the stand-in's images hold no smoke program: the probe brings its own
        listed = subprocess.run(
            ["docker", "run", "--rm", "--entrypoint", "sh", f"{REGISTRY}/{STAND_IN}/library/{image}", "-c",
             f"ls -d /opt/ecoready 2>/dev/null; find / -xdev \\( {NAMES} \\) -exec grep -l ecoready {{}} + || true"],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert listed.returncode == 0 and listed.stdout.strip() == "", (image, listed.stdout, listed.stderr[-500:])


def test_the_default_matrix_s_connector_rows_run_ready_through_the_stand_in(stand_in_report: dict[str, Any]) -> None:
    # the session's run of the default matrix through the stand-ins (tests/conftest.py)
    report = stand_in_report
    assert RUN_CONNECTORS and X_DEVAPI not in IN_LAB
    cells = [c for c in report["cells"] if c["component"] in {row.id for row in ROWS}]
    assert len(cells) == 2 * len(RUN_CONNECTORS)
    backends = {row.id: row.backend for row in ROWS}
    for cell in cells:
        assert cell["status"] == "ready", (cell["id"], cell["detail"], report["_stderr"][-3000:])
        assert cell["emulated"] is (cell["arch"] == "arm64")
        assert cell["image"]["mirror"] == f"{REGISTRY}/{STAND_IN}", cell["image"]
        packaging = cell["packaging"]
        assert packaging["arch"] == cell["arch"] and packaging["verdict"] == "ready", packaging
        if packaging["registry"] == "deb":  # not asked before: the install says what apt took
            assert packaging["install"].startswith("installed with apt-get"), packaging
            for name in packaging["package"].split(","):
                assert f"{name}=" in packaging["version"], packaging
        checks = checks_of(cell)
        passed = [name for name, check in checks.items() if check["outcome"] == "pass"]
        if backends[cell["component"]] == "mysql-9.7":
            assert passed == CHECKS + MYSQL_CHECKS, (cell["id"], checks)
            assert checks["tls"]["detail"].startswith("encrypted: TLS"), checks["tls"]
            sha2 = checks["caching_sha2_password"]["detail"]
            if cell["component"] == X_DEVAPI:  # the X Protocol: PLAIN over TLS (docs/drivers.md)
                assert "logged in with PLAIN over TLS" in sha2, sha2
                assert checks["connect"]["detail"].startswith("X Protocol backend-server:33060 "), checks["connect"]
                assert "Mysqlx_prep_prepare +1, Mysqlx_prep_execute +1" in checks["prepared_utf8mb4"]["detail"]
            else:
                assert "full, then fast authentication" in sha2, sha2
        else:
            assert passed == CHECKS, (cell["id"], checks)
            assert "MariaDB" in checks["version"]["detail"], checks["version"]
        assert "1045" in checks["wrong_password"]["detail"], (cell["id"], checks["wrong_password"])
    by_id = {c["id"]: c for c in cells}
    for arch in ("amd64", "arm64"):
        built = by_id[f"connector-python-mariadb/{arch}"]["packaging"]  # no Linux wheel
        assert built["install"].startswith("built from source"), built
        # the very version the packaging stage resolved is the one that ran
        for cid, words in (
            ("connector-nodejs-mariadb", "mariadb {}"),
            (X_DEVAPI, "@mysql/xdevapi {}"),
            ("connector-python-mariadb", "mariadb {}"),
        ):
            cell = by_id[f"{cid}/{arch}"]
            assert words.format(cell["packaging"]["version"]) in checks_of(cell)["connect"]["detail"], cell["id"]
        assert "Python 3.13" in checks_of(by_id[f"connector-python-mariadb/{arch}"])["connect"]["detail"]
