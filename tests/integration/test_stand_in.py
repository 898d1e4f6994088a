"""The default matrix, unchanged, through a registry mirror pointed at the lab's Docker Hub
stand-in (`ecoready lab build` publishes what it really makes under docker.io's names in
the `hub/` namespace of the local registry: mariadb:10.11 and 11.8, mysql:9.7, and
debian:bookworm-slim / trixie-slim from its debootstrap bases), `--only` the rows the
stand-in serves, on both arches, with the matrix's own profile (quick): every cell ready,
the bench stage included, sysbench derived from the stand-in's debian:trixie-slim on first
use. The rows it cannot serve (mysql:8.4, Percona's, ProxySQL, MaxScale, PMM, Oracle's
registry) are the mirror's gap: `ecoready images` says so, never `missing`."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from ecoready.lab.recipes import IMAGES, REGISTRY, STAND_IN, STAND_IN_BASES
from tests.support.cli import ROOT, ecoready

pytestmark = [pytest.mark.docker, pytest.mark.slow]

MIRRORS = {"ECOREADY_REGISTRY_MIRRORS": f"docker.io={REGISTRY}/{STAND_IN}"}
SERVED = ("mariadb-10.11", "mariadb-11.8", "mysql-9.7", "mariadb-backup", "mariadb-client")
# The rows run here: every row served. mariadb-11.8's oltp_read_write restarts a few
# transactions at 8 threads (1020, innodb_snapshot_isolation): counted, not a failure.
RUN = SERVED


@pytest.fixture
def stand_in(lab: Path) -> None:
    for repo in ("library/mariadb", "library/mysql", "library/debian"):
        answer = httpx.get(f"http://{REGISTRY}/v2/{STAND_IN}/{repo}/tags/list", timeout=10)
        if answer.status_code != 200:
            pytest.fail(f"the lab's Docker Hub stand-in lacks {repo}: run `ecoready lab build`")


def test_images_of_the_default_matrix_through_the_stand_in(stand_in: None, tmp_path: Path) -> None:
    result = ecoready(
        "images", "--matrix", str(ROOT / "matrix.toml"), "--json", "-", env={**MIRRORS, "XDG_CACHE_HOME": str(tmp_path)}
    )
    report = json.loads(result.stdout)
    verdicts = {(c["component"], c["arch"]): c for c in report["checks"]}
    assert "missing" not in report["summary"]  # what the stand-in lacks is its gap, not the component's
    # what the lab publishes under docker.io's names (LabImage.upstream), and its Debian bases
    served = {f"{repo.removeprefix('library/')}:{tag}" for image in IMAGES for repo, tag in image.upstream}
    served |= {f"debian:{suite}-slim" for suite in STAND_IN_BASES}
    for check in verdicts.values():
        if check["reference"] in served:
            assert check["verdict"] == "available" and check["mirror"] == f"{REGISTRY}/{STAND_IN}", check
        elif not check["reference"].startswith("container-registry.oracle.com/"):
            assert check["verdict"] == "error" and "this mirror of docker.io lacks it" in check["detail"], check
    assert {c for c, _ in verdicts if verdicts[(c, "amd64")]["verdict"] == "available"} >= set(SERVED)


def test_the_default_matrix_runs_ready_through_the_stand_in(stand_in: None, tmp_path: Path, no_leaks: None) -> None:
    out = tmp_path / "r.json"
    args = ("run", "--headless", "--matrix", str(ROOT / "matrix.toml"), "--only", ",".join(RUN), "--json", str(out))
    result = ecoready(*args, env={**MIRRORS, "XDG_CACHE_HOME": str(tmp_path)}, timeout=3000)
    report = json.loads(out.read_text())
    assert report["profile"] == "quick"
    cells = report["cells"]
    assert len(cells) == 2 * len(RUN)
    for cell in cells:
        assert cell["status"] == "ready", (cell["id"], cell["detail"], result.stderr[-2000:])
        assert cell["image"]["mirror"] == f"{REGISTRY}/{STAND_IN}"
        assert cell["image"]["reference"] in ("mariadb:10.11", "mariadb:11.8", "mysql:9.7")
    benched = [c for c in cells if c["component"] in ("mariadb-10.11", "mariadb-11.8", "mysql-9.7")]
    for cell in benched:
        assert [s["stage"] for s in cell["stages"]][-1] == "bench", cell["id"]
        assert cell["bench"]["tool"].startswith("sysbench 1.0"), cell["bench"]
    assert result.returncode == 0, result.stderr[-2000:]
