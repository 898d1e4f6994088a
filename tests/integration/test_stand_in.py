"""The default matrix's rows, unchanged, through registry mirrors pointed at the lab's
stand-ins (`ecoready lab build` publishes what it really makes under the upstream names in
a namespace of the local registry per upstream registry: `hub/` for Docker Hub with
mariadb:10.11 and 11.8, mysql:9.7, haproxy:3.2, percona/percona-toolkit:3.7.1 and
debian:bookworm-slim / trixie-slim from its debootstrap bases; `oracle/` for Oracle's
registry with mysql/community-router:9.7), `--only` the rows the stand-ins serve, on both
arches, with the matrix's own profile (quick; its runs of 2 s, tests/support/stand_in.py):
every cell ready, the bench stage included, sysbench derived from the stand-in's
debian:trixie-slim on first use. The rows they cannot serve (mysql:8.4, Percona's servers,
ProxySQL, MaxScale, PMM, ...) are the mirror's gap: `ecoready images` says so, never
`missing`.

The rows haproxy, replication-mariadb and the 9.7 pins of replication-mysql,
group-replication, mysql-router and percona-toolkit are the default matrix's as of the
late-2026 refresh (issue 41). The haproxy row's backend is a MariaDB server (HAProxy's
`option mysql-check`); before MySQL the probe checks with a login of its own that names
caching_sha2_password (probes/haproxy.py; the lab row `haproxy-mysql`).

The backup and dump tools served: mariadb-backup, and the logical dumps of the `dump` rows
(mysqldump in mysql:9.7, mariadb-dump in mariadb:11.8, each into a second server). The
mydumper row's image is not served: Debian has only mydumper 0.10, never `v1.0.3-1`.

A served row whose cells the whole-lab run already runs as they are (`IN_LAB`: replication
and group replication on mysql:9.7, mysqldump, the driver rows) is run there, not twice:
its lab twin must be ready on both arches on the very image (one digest under both names)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from ecoready.engine.platform import host_arch
from ecoready.lab.recipes import REGISTRY, STAND_INS
from tests.support.cli import ROOT, ecoready
from tests.support.stand_in import (
    DEFAULT,
    IN_LAB,
    LAB,
    MIRRORS,
    RUN,
    SERVED,
    SERVED_IMAGES,
    STAND_IN_OF,
    registry_of,
    require_stand_in,
    runs_as,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BENCHED = ("mariadb-10.11", "mariadb-11.8", "mysql-9.7", "haproxy")  # the probes with a bench stage


@pytest.fixture
def stand_in(lab: Path) -> None:
    require_stand_in()


def test_images_of_the_default_matrix_through_the_stand_in_after_a_split_build(stand_in: None, tmp_path: Path) -> None:
    # `make demo`'s second half: a build of the emulated arch alone (on a built lab it only
    # publishes again); every index must keep the arch the first build published
    other = "arm64" if host_arch() == "amd64" else "amd64"
    split = ecoready("lab", "build", "--arch", other, timeout=3600)
    assert split.returncode == 0, split.stderr[-2000:]
    result = ecoready(
        "images", "--matrix", str(ROOT / "matrix.toml"), "--json", "-", env={**MIRRORS, "XDG_CACHE_HOME": str(tmp_path)}
    )
    report = json.loads(result.stdout)
    verdicts = {(c["component"], c["arch"]): c for c in report["checks"]}
    assert "missing" not in report["summary"]  # what the stand-in lacks is its gap, not the component's
    for check in verdicts.values():
        registry = registry_of(check["reference"])
        if check["reference"] in SERVED_IMAGES:
            assert check["verdict"] == "available" and check["mirror"] == STAND_IN_OF[registry], check
        elif registry in STAND_IN_OF:
            assert check["verdict"] == "error" and f"this mirror of {registry} lacks it" in check["detail"], check
    for arch in ("amd64", "arm64"):  # both arches of every index, the bases' included
        assert {c for c, a in verdicts if a == arch and verdicts[(c, a)]["verdict"] == "available"} >= set(SERVED)


def test_the_default_matrix_runs_ready_through_the_stand_in(stand_in_report: dict[str, Any]) -> None:
    # the session's run of the default matrix through the stand-ins (tests/conftest.py), these rows' cells
    report = stand_in_report
    assert report["profile"] == "quick"
    cells = [c for c in report["cells"] if c["component"] in RUN]
    assert len(cells) == 2 * len(RUN)
    not_ready = [(c["id"], c["status"], c["detail"]) for c in cells if c["status"] != "ready"]
    assert not not_ready, (not_ready, report["_stderr"][-2000:])
    for cell in cells:
        reference = cell["image"]["reference"]
        assert reference in SERVED_IMAGES, cell["id"]
        assert cell["image"]["mirror"] == STAND_IN_OF[SERVED_IMAGES[reference]], cell["id"]
    benched = [c for c in cells if c["component"] in BENCHED]
    assert len(benched) == 2 * len(BENCHED)
    for cell in benched:
        assert [s["stage"] for s in cell["stages"]][-1] == "bench", cell["id"]
        assert cell["bench"]["tool"].startswith("sysbench 1.0"), cell["bench"]
        # the quick profile's series in the runs of 2 s the test asks for (short_benches)
        series = {(s["workload"], s["threads"]) for s in cell["bench"]["series"]}
        assert len(series) == (3 if cell["emulated"] else 6) and "2 s runs" in cell["bench"]["method"], cell["bench"]
    assert report["_exit"] == 0, report["_stderr"][-2000:]  # every cell of the run ready, these and the others


def _digest(reference: str) -> str:
    """The digest the lab's registry serves for a lab name or, for an upstream name, its stand-in's."""
    if reference.startswith(f"{REGISTRY}/"):
        path, _, tag = reference.removeprefix(f"{REGISTRY}/").rpartition(":")
    else:
        registry = registry_of(reference)
        path, _, tag = reference.removeprefix(f"{registry}/").rpartition(":")
        path = f"{STAND_INS[registry]}/{'library/' if '/' not in path else ''}{path}"
    accept = "application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json"
    answer = httpx.get(f"http://{REGISTRY}/v2/{path}/manifests/{tag}", headers={"Accept": accept}, timeout=10)
    assert answer.status_code == 200, (reference, answer.status_code)
    return answer.headers["Docker-Content-Digest"]


def test_the_rows_the_lab_run_holds_are_ready_there_on_the_images_the_stand_in_serves(
    lab_report: dict[str, Any],
) -> None:
    # every lab driver row is a default row's twin, so its cells run once (issue 55)
    assert {c.id for c in LAB.components if "driver" in c.options} <= set(IN_LAB.values())
    cells = {(c["component"], c["arch"]): c for c in lab_report["cells"]}
    for row, twin in IN_LAB.items():
        default, lab = DEFAULT.component(row), LAB.component(twin)
        assert default.image in SERVED_IMAGES, row  # its image through the mirror: the images test
        assert runs_as(DEFAULT, default) == runs_as(LAB, lab) is not None
        for arch in ("amd64", "arm64"):
            cell = cells[(twin, arch)]
            assert cell["status"] == "ready" and cell["emulated"] is (arch == "arm64"), (cell["id"], cell["detail"])
        while default.backend and lab.backend:
            assert _digest(default.image) == _digest(lab.image), (default.image, lab.image)
            default, lab = DEFAULT.component(default.backend), LAB.component(lab.backend)
        assert _digest(default.image) == _digest(lab.image), (default.image, lab.image)
