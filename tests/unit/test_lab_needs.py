"""Which lab images a matrix's rows run on (app/lab/needs.py): what `ecoready lab build
--matrix M --rows ...` builds, and the rows `make demo` answers first."""

from __future__ import annotations

import pytest

from ecoready.lab.needs import first_wave, needs
from ecoready.lab.recipes import IMAGES
from ecoready.matrix.document import Matrix
from ecoready.matrix.load import load
from tests.support.cli import LAB_MATRIX, ROOT, ecoready

LAB = load(LAB_MATRIX)
DEFAULT = load(ROOT / "matrix.toml")


def keys(matrix_rows: list[str], matrix: Matrix = LAB) -> list[str]:
    return [i.key for i in needs(matrix, matrix_rows).images]


def test_a_row_needs_its_image_and_its_backend_s() -> None:
    assert keys(["connector-c"]) == ["connectors:bookworm", "mysql:9.7"]
    # lab/haproxy:2.6 is an alias of the tools image; its backend is MariaDB 10.11
    assert keys(["haproxy"]) == ["mariadb:10.11", "tools:bookworm"]
    assert keys(["driver-go-mysql"]) == ["golang:1.27", "mysql:9.7"]


def test_a_gap_row_needs_the_gaps_and_their_source() -> None:
    wanted = needs(LAB, ["gap-amd64-only"])
    assert wanted.gaps and [i.key for i in wanted.images] == ["mariadb:10.11"]
    assert not needs(LAB, ["mariadb-10.11"]).gaps


def test_the_lab_matrix_builds_nothing_no_row_asks_for() -> None:
    wanted = needs(LAB, [c.id for c in LAB.components])
    # the default matrix's stand-ins and the own-stack image are not the lab matrix's
    assert {i.key for i in IMAGES} - {i.key for i in wanted.images} == {
        "haproxy:3.2",
        "percona-toolkit:3.7.1",
        "community-router:9.7",
        "app-client:1",
    }
    assert wanted.gaps and not wanted.bases


def test_the_default_matrix_s_rows_map_to_the_stand_ins_through_their_upstream_names() -> None:
    wanted = needs(DEFAULT, [c.id for c in DEFAULT.components])
    assert {"mysql:9.7", "haproxy:3.2", "community-router:9.7", "percona-toolkit:3.7.1"} <= {
        i.key for i in wanted.images
    }
    assert wanted.bases  # debian:trixie-slim: the derived sysbench's base and the deb: connector rows
    # python:3.13 through the mirror of docker.io, its backend mysql:9.7
    assert keys(["connector-python-mysqlclient"], DEFAULT) == ["python:3.13", "mysql:9.7"]


def test_the_lab_s_driver_rows_run_on_the_default_matrix_s_runtime_images() -> None:
    # one build of each runtime, and one driver install per image, arch and version for both
    lab_runtimes = {c.image.rsplit("/", 1)[-1] for c in LAB.components if "driver" in c.options}
    default = needs(DEFAULT, [c.id for c in DEFAULT.components if c.probe == "connector"])
    assert lab_runtimes and lab_runtimes <= {i.key for i in default.images}


def test_the_first_wave_is_the_servers_and_the_rows_on_their_images() -> None:
    wave = first_wave(LAB)
    assert {"mariadb-10.11", "mariadb-11.8", "mysql-9.7", "galera", "replication-mysql"} <= set(wave)
    assert not [row for row in wave if row.startswith(("gap-", "connector-", "driver-"))]
    servers = needs(LAB, ["mariadb-10.11", "mariadb-11.8", "mysql-9.7"]).images
    assert needs(LAB, wave).images == servers


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--rows", "mariadb-10.11"), "--rows names rows of a matrix: give it with --matrix"),
        (("--matrix", str(LAB_MATRIX), "--rows", "no-such-row"), "--only names unknown component(s)"),
        (("--matrix", str(LAB_MATRIX), "--only", "tools"), "--only and --matrix both choose the images"),
    ],
)
def test_bad_rows_are_a_usage_error(args: tuple[str, ...], words: str) -> None:
    result = ecoready("lab", "build", *args)
    assert result.returncode == 2 and words in result.stderr, result.stderr
