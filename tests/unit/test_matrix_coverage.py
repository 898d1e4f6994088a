"""The default matrix covers the whole mission: every category has a row, every kind of the
mission is used, every row is pinned, and the matrix validates as it is."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from ecoready.domain.drivers import parse_driver
from ecoready.domain.model import Category
from ecoready.matrix.load import load

ROOT = Path(__file__).resolve().parents[2]
MATRIX = ROOT / "matrix.toml"
# The mission, component by component: (category, probe kind, an image substring).
MISSION = [
    ("server", "server", "mysql:8.4"),
    ("server", "server", "mysql:9.7"),
    ("server", "server", "mariadb:10.11"),
    ("server", "server", "mariadb:11.4"),
    ("server", "server", "mariadb:11.8"),
    ("server", "server", "mariadb:12.3"),
    ("server", "server", "percona/percona-server:8.0"),
    ("server", "server", "percona/percona-server:8.4"),
    ("server", "server", "percona/percona-server:9.7"),
    ("load-balancer", "proxysql", "proxysql/proxysql:3.0"),
    ("load-balancer", "maxscale", "mariadb/maxscale:"),
    ("load-balancer", "router", "container-registry.oracle.com/mysql/community-router:9.7"),
    ("load-balancer", "haproxy", "haproxy:3.2"),
    ("load-balancer", "command", "vitess/lite:"),
    ("monitoring", "pmm", "percona/pmm-server:3"),
    ("monitoring", "command", "severalnines/clustercontrol:"),
    ("ha", "galera", "mariadb:"),
    ("ha", "pxc", "percona/percona-xtradb-cluster:"),
    ("ha", "replication", "mysql:9.7"),
    ("ha", "replication", "mariadb:11.8"),
    ("ha", "group-replication", "mysql:9.7"),
    ("ha", "command", "percona/percona-orchestrator:"),
    ("backup", "xtrabackup", "percona/percona-xtrabackup:"),
    ("backup", "mariabackup", "mariadb:"),
    ("backup", "mydumper", "mydumper/mydumper:"),
    ("backup", "dump", "mysql:9.7"),
    ("backup", "dump", "mariadb:11.8"),
    ("shell", "shell", "mysql:"),
    ("shell", "shell", "mariadb:"),
    ("toolkit", "toolkit", "percona/percona-toolkit:3.7.1"),
    ("toolkit", "ghost", "golang:"),  # gh-ost, built from the Go module proxy (no image published)
    ("connector", "connector", "python:3."),
    ("connector", "connector", "node:"),
    ("connector", "connector", "eclipse-temurin:"),
    ("connector", "connector", "golang:"),
    ("connector", "connector", "debian:"),
]
# The mission's categories: `app` is the user's own services (`ecoready init`, docs/own-stack.md).
MISSION_CATEGORIES = {c for c in Category if c is not Category.APP}
# The mission's nine languages, each a connector row's `language` (a driver row's: one
# smoke program per language, several drivers each).
LANGUAGES = {"c", "cpp", "java", "python", "go", "nodejs", "php", "perl", "ruby"}
# The languages whose drivers come from a registry reachable here (PyPI, npm, Maven
# Central, the Go module proxy), and the drivers each must have a row for: the community's
# and Oracle's and MariaDB's connectors; then the languages of Debian's packages.
REGISTRY_DRIVERS = {
    "python": {"pypi:PyMySQL", "pypi:mysqlclient", "pypi:mysql-connector-python", "pypi:mariadb"},
    "nodejs": {"npm:mysql2", "npm:mariadb", "npm:@mysql/xdevapi"},  # the last: Connector/Node.js, X Protocol
    "java": {"maven:com.mysql:mysql-connector-j", "maven:org.mariadb.jdbc:mariadb-java-client"},
    "go": {"go:github.com/go-sql-driver/mysql"},
    # RubyGems, CPAN and PECL cannot be reached here, and C/C++ connectors have no registry:
    # the distribution's packages on the official Debian image
    "php": {"deb:php8.4-cli,php8.4-mysql"},
    "perl": {"deb:perl,libdbd-mariadb-perl"},
    "ruby": {"deb:ruby,ruby-mysql2"},
    "c": {"deb:gcc,libc6-dev,libmariadb-dev"},
    "cpp": {"deb:g++,libmysqlcppconn-dev"},
}


def rows() -> list[dict]:
    return tomllib.loads(MATRIX.read_text())["components"]


def test_every_mission_category_has_a_row() -> None:
    categories = {row["category"] for row in rows()}
    assert categories == {c.value for c in MISSION_CATEGORIES}


@pytest.mark.parametrize(("category", "kind", "image"), MISSION, ids=[f"{k}:{i}" for _, k, i in MISSION])
def test_every_mission_component_has_a_row(category: str, kind: str, image: str) -> None:
    assert any(r["category"] == category and r["probe"] == kind and image in r["image"] for r in rows())


def connector_rows() -> list[dict]:
    return [r for r in rows() if r["probe"] == "connector"]


def test_connector_rows_are_driver_rows_on_official_runtime_images() -> None:
    """Each registry language has a row per driver, pinned in its registry, on the
    official runtime image (no lab image: the smoke programs ship inside ecoready)."""
    found: dict[str, set[str]] = {}
    for row in connector_rows():
        spec = parse_driver(row["options"]["driver"])
        assert spec.constraint or spec.registry == "deb", f"{row['id']}: pinned as users pin it"
        found.setdefault(row["options"]["language"], set()).add(f"{spec.registry}:{spec.package}")
        assert not row["image"].startswith(("127.0.0.1", "localhost")), row["id"]
        assert row["image"].split(":")[0] in ("python", "node", "eclipse-temurin", "golang", "debian"), row["id"]
    assert found == REGISTRY_DRIVERS


def test_every_mission_language_has_a_connector_row() -> None:
    assert {r["options"]["language"] for r in connector_rows()} == LANGUAGES


def test_images_are_pinned_never_latest() -> None:
    refs = [r["image"] for r in rows()] + [
        v for r in rows() for k, v in r.get("options", {}).items() if k.endswith("image")
    ]
    for ref in refs:
        name, _, tag = ref.rpartition(":")
        assert name and "/" not in tag, f"{ref} has no tag"
        assert tag != "latest" and re.match(r"^[A-Za-z0-9_.-]+$", tag), ref


def test_pmm_client_and_pmm_server_rows() -> None:
    (pmm,) = [r for r in rows() if r["probe"] == "pmm"]
    assert pmm["options"]["client_image"].startswith("percona/pmm-client:3")


def test_replication_rows_speak_both_dialects() -> None:
    flavors = {r["options"]["flavor"] for r in rows() if r["probe"] == "replication"}
    assert flavors == {"mysql", "mariadb"}


def test_generic_rows_run_a_program_of_the_image() -> None:
    """ClusterControl, orchestrator and Vitess have no kind of their own: each runs one of
    its programs on the arch (the generic probe passes on exit 0)."""
    generic = {r["id"]: r["options"] for r in rows() if r["probe"] == "command"}
    assert set(generic) == {"clustercontrol", "orchestrator", "vitess"}
    for options in generic.values():
        assert options["entrypoint"] and options["command"] and options.get("mode", "run") == "run"


def test_the_matrix_validates_and_uses_every_mission_kind() -> None:
    matrix = load(MATRIX, {})
    assert {c.category for c in matrix.components} == MISSION_CATEGORIES
    assert {c.probe for c in matrix.components} == {kind for _, kind, _ in MISSION}
