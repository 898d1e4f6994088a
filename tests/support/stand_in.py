"""The default matrix through registry mirrors pointed at the lab's stand-ins, run once per
test session (`stand_in_report` in tests/conftest.py): the rows the stand-ins serve
(tests/integration/test_stand_in.py), the connector rows on the official runtime images'
stand-ins (test_stand_in_connectors.py) and gh-ost (test_stand_in_ghost.py), on both
arches, in one run whose report every one of those tests reads: the rows used to run in
three runs (and the connector rows' drivers were installed by each that had them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from ecoready.lab.recipes import ORACLE_REGISTRY, REGISTRY, STAND_INS
from ecoready.matrix.load import load
from tests.support.cli import ROOT, docker_labelled, ecoready

MATRIX = ROOT / "matrix.toml"
# the stand-in of each registry, as the mirror of that registry (prefix style)
STAND_IN_OF = {registry: f"{REGISTRY}/{namespace}" for registry, namespace in STAND_INS.items()}
MIRRORS = {"ECOREADY_REGISTRY_MIRRORS": ",".join(f"{r}={m}" for r, m in STAND_IN_OF.items())}
# the references the stand-ins serve, by the registry they stand in for
SERVED_IMAGES = {
    "mariadb:10.11": "docker.io",
    "mariadb:11.8": "docker.io",
    "mysql:9.7": "docker.io",
    "debian:trixie-slim": "docker.io",
    "haproxy:3.2": "docker.io",
    "percona/percona-toolkit:3.7.1": "docker.io",
    f"{ORACLE_REGISTRY}/mysql/community-router:9.7": ORACLE_REGISTRY,
    # the connector rows' runtimes
    "python:3.13-slim": "docker.io",
    "python:3.13": "docker.io",
    "node:24": "docker.io",
    "golang:1.27": "docker.io",
    "eclipse-temurin:21": "docker.io",
}
SERVED = (
    "mariadb-10.11",
    "mariadb-11.8",
    "mysql-9.7",
    "mariadb-backup",
    "mysqldump-9.7",
    "mariadb-dump-11.8",
    "mariadb-client",
    "haproxy",
    "mysql-router",
    "replication-mysql",
    "replication-mariadb",
    "group-replication",
    "galera-mariadb",
    "percona-toolkit",
)
# The rows run here: every row served but Galera (three nodes per arch, and not one of the
# rows issue 41 names; its image is checked by test_stand_in.py's images test).
# mariadb-11.8's oltp_read_write restarts a few transactions at 8 threads (1020,
# innodb_snapshot_isolation): counted, not a failure.
RUN = tuple(row for row in SERVED if row != "galera-mariadb")
CONNECTOR_ROWS = tuple(c for c in load(MATRIX, {}).components if c.probe == "connector")
GHOST_ROW = next(c for c in load(MATRIX, {}).components if c.probe == "ghost")
ROWS = (*RUN, *(c.id for c in CONNECTOR_ROWS), GHOST_ROW.id)


def registry_of(reference: str) -> str:
    first, _, rest = reference.partition("/")
    return first if rest and ("." in first or ":" in first) else "docker.io"


def require_stand_in() -> None:
    """Fail with the command that fixes it when a stand-in lacks an image the rows use."""
    for reference, registry in SERVED_IMAGES.items():
        path, _, tag = reference.removeprefix(f"{ORACLE_REGISTRY}/").rpartition(":")
        repo = f"library/{path}" if registry == "docker.io" and "/" not in path else path
        answer = httpx.get(f"http://{REGISTRY}/v2/{STAND_INS[registry]}/{repo}/tags/list", timeout=10)
        if answer.status_code != 200 or tag not in (answer.json().get("tags") or []):
            pytest.fail(f"the lab's stand-in of {registry} lacks {reference}: run `ecoready lab build`")


def run_stand_in(work: Path) -> dict[str, Any]:
    """One run of ROWS through the stand-ins, both arches; its report, with `_stderr` and
    `_exit` added, and nothing of it left on the engine."""
    out = work / "report.json"
    args = ("run", "--headless", "--matrix", str(MATRIX), "--only", ",".join(ROWS), "--json", str(out))
    result = ecoready(*args, env={**MIRRORS, "XDG_CACHE_HOME": str(work / "cache")}, timeout=5400)
    report: dict[str, Any] = json.loads(out.read_text())
    report["_stderr"] = result.stderr
    report["_exit"] = result.returncode
    assert docker_labelled(f"ecoready.run={report['run_id']}") == {"containers": [], "networks": [], "volumes": []}
    return report
