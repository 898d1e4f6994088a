"""The default matrix through registry mirrors pointed at the lab's stand-ins, run once per
test session (`stand_in_report` in tests/conftest.py): the rows the stand-ins serve
(tests/integration/test_stand_in.py), the connector rows on the official runtime images'
stand-ins (test_stand_in_connectors.py) and gh-ost (test_stand_in_ghost.py), on both
arches, in one run whose report every one of those tests reads.

A default row whose cells the whole-lab run already runs (`IN_LAB`: the same probe, options
and image under the lab's name, its backend likewise, no bench stage for the profiles to
tell apart) is not run here a second time: test_stand_in.py checks that its lab twin is
ready on both arches on the very images the stand-in serves under the upstream name, and
its image through the mirror with the rest. Each expensive cell runs once (issue 55)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from ecoready.domain.model import Component
from ecoready.lab.needs import lab_image_of
from ecoready.lab.recipes import ORACLE_REGISTRY, REGISTRY, STAND_INS
from ecoready.matrix.document import Matrix
from ecoready.matrix.kinds import KINDS
from ecoready.matrix.load import load
from tests.support.cli import LAB_MATRIX, ROOT, docker_labelled, ecoready

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
DEFAULT = load(MATRIX, {})
LAB = load(LAB_MATRIX, {})


def runs_as(matrix: Matrix, row: Component) -> tuple[str, ...] | None:
    """What `row`'s cells run, names aside: its probe, options and lab image, then its
    backend's likewise; None when an image is not the lab's."""
    image = lab_image_of(row.image)
    backend = runs_as(matrix, matrix.component(row.backend)) if row.backend else ()
    if image is None or backend is None:
        return None
    return (row.probe, json.dumps(dict(row.options), sort_keys=True), image.key, *backend)


def _in_lab() -> dict[str, str]:
    """Default rows -> lab rows whose cells run the same; a row that benches is never one
    (the default matrix's profile benches, the lab's does not)."""
    lab = {key: c.id for c in LAB.components if (key := runs_as(LAB, c)) is not None}
    return {
        c.id: lab[key]
        for c in DEFAULT.components
        if not KINDS[c.probe].benchmarks and (key := runs_as(DEFAULT, c)) is not None and key in lab
    }


# default row -> its lab twin, whose cells the whole-lab run runs
IN_LAB = _in_lab()
# The served rows run here: every one but Galera (three nodes per arch, and not one of the
# rows issue 41 names; its image is checked by test_stand_in.py's images test) and those
# the lab run holds. mariadb-11.8's oltp_read_write restarts a few transactions at 8
# threads (1020, innodb_snapshot_isolation): counted, not a failure.
RUN = tuple(row for row in SERVED if row != "galera-mariadb" and row not in IN_LAB)
CONNECTOR_ROWS = tuple(c for c in DEFAULT.components if c.probe == "connector")
RUN_CONNECTORS = tuple(c for c in CONNECTOR_ROWS if c.id not in IN_LAB)
GHOST_ROW = next(c for c in DEFAULT.components if c.probe == "ghost")
ROWS = (*RUN, *(c.id for c in RUN_CONNECTORS), GHOST_ROW.id)


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


# The quick profile's workloads and threads in runs of 2 s after a 1 s warmup, not 10 and 5:
# the path through the stand-ins is under test here (sysbench derived from the stand-in's
# Debian on first use, each bench alone), the figures in bench/ and test_bench_noise. The
# four native benches, one at a time at the run's end, took 316 s of a 912 s run at 10 s.
BENCH_KNOBS = "time = 2\nwarmup = 1\n"


def short_benches(text: str) -> str:
    """The default matrix as it is but for shorter bench runs in its `[sysbench]` table."""
    table = '[sysbench]\nbase = "debian:trixie-slim"\n'
    assert text.count(table) == 1, "matrix.toml's [sysbench] table changed: update short_benches"
    return text.replace(table, table + BENCH_KNOBS)


def run_stand_in(work: Path) -> dict[str, Any]:
    """One run of ROWS through the stand-ins, both arches; its report, with `_stderr`,
    `_exit`, `_path` (the file) and `_events` (its event log) added, and nothing of it
    left on the engine."""
    out = work / "report.json"
    matrix = work / "matrix.toml"
    matrix.write_text(short_benches(MATRIX.read_text()))
    args = ("run", "--headless", "--matrix", str(matrix), "--only", ",".join(ROWS), "--json", str(out))
    events = work / "events.jsonl"  # what the run emitted, in order (test_bench_isolation.py)
    env = {**MIRRORS, "XDG_CACHE_HOME": str(work / "cache"), "ECOREADY_EVENT_LOG": str(events)}
    result = ecoready(*args, env=env, timeout=5400)
    report: dict[str, Any] = json.loads(out.read_text())
    report["_stderr"] = result.stderr
    report["_exit"] = result.returncode
    report["_path"] = str(out)
    report["_events"] = str(events)
    assert docker_labelled(f"ecoready.run={report['run_id']}") == {"containers": [], "networks": [], "volumes": []}
    return report
