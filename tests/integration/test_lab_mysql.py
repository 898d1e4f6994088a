"""The lab's MySQL 9.7 (Debian's unstable suite): the image honours the official `mysql`
image's contract, and every probe that runs on it reports a check that fails on purpose as
`partial`, naming the check. The rows themselves (ready on amd64 and arm64) are in the whole
lab run, tests/integration/test_lab_matrix.py.

Faults are made the way they happen: a server killed while a cell's smoke checks run (the
event log says when they start) stops answering them: a Router routes to a server that is
gone, a replica's primary is gone, a group member is gone, a client's server is gone."""

from __future__ import annotations

import gzip
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import docker_labelled
from tests.support.lab_containers import logs, sql, start, until_ready
from tests.support.runs import Run, write_matrix

pytestmark = pytest.mark.docker

MYSQL = "127.0.0.1:5000/lab/mysql:9.7"
LOCAL = "ecoready-lab/mysql:9.7-amd64"  # the amd64 image as the lab built it
VERSION = "9.7.4-2"


# -- the image's contract --------------------------------------------------------------
def test_the_mysql_image_honours_the_official_contract(lab: Path, network: str, tmp_path: Path, no_leaks: None) -> None:
    initdb = tmp_path / "initdb"
    initdb.mkdir()
    (initdb / "1-schema.sql").write_text("CREATE TABLE t (id INT PRIMARY KEY);\n")
    (initdb / "2-rows.sql.gz").write_bytes(gzip.compress(b"INSERT INTO t VALUES (1), (2);\n"))
    (initdb / "3-note.sh").write_text('mysql -uroot -p"$MYSQL_ROOT_PASSWORD" -e "INSERT INTO app.t VALUES (3)"\n')
    secret = tmp_path / "root"
    root_pw = "r00t'\"pw\\\n#x"  # quotes, a backslash, a line break, a comment sign
    secret.write_text(root_pw)  # survive the entrypoint's one-line SQL and its option file
    user_secret = tmp_path / "user"
    user_secret.write_text("us3r-pw")
    server = start(
        network,
        "-e",
        "MYSQL_ROOT_PASSWORD_FILE=/secrets/root",
        "-e",
        "MYSQL_DATABASE=app",
        "-e",
        "MYSQL_USER=appuser",
        "-e",
        "MYSQL_PASSWORD_FILE=/secrets/user",
        "-v",
        f"{tmp_path}:/secrets:ro",
        "-v",
        f"{initdb}:/docker-entrypoint-initdb.d:ro",
        LOCAL,
        "--max-connections=77",  # mysqld arguments pass through
    )
    until_ready(server, password=root_pw)
    assert sql(server, "SELECT @@version, @@max_connections, @@socket, @@datadir", password=root_pw) == (
        f"{VERSION}\t77\t/var/run/mysqld/mysqld.sock\t/var/lib/mysql/"
    )
    assert sql(server, "SELECT COUNT(*) FROM t", user="appuser", password="us3r-pw", database="app") == "3"
    assert sql(server, "SELECT user, host FROM mysql.user WHERE user = 'root' ORDER BY host", password=root_pw) == (
        "root\t%\nroot\tlocalhost"
    )
    text = logs(server)
    assert "Starting temporary server" in text and "MySQL init process done. Ready for start up." in text
    # the init server never listened on TCP: its "ready for connections" says port 0
    assert "port: 0" in text and "port: 3306" in text

    random_root = start(network, "-e", "MYSQL_RANDOM_ROOT_PASSWORD=1", LOCAL)
    empty_root = start(network, "-e", "MYSQL_ALLOW_EMPTY_PASSWORD=1", "-e", "MYSQL_ROOT_HOST=localhost", LOCAL)
    until_ready(empty_root, tcp=False)
    assert sql(empty_root, "SELECT user, host FROM mysql.user WHERE user = 'root'", tcp=False) == "root\tlocalhost"
    for _ in range(120):
        if "GENERATED ROOT PASSWORD" in logs(random_root):
            break
        time.sleep(0.5)
    else:
        raise AssertionError(logs(random_root))

    refused = subprocess.run(["docker", "run", "--rm", LOCAL], capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "password option is not specified" in refused.stderr


# -- a check made to fail on purpose, per probe --------------------------------------------
SERVER_ROW = """
[[components]]
id = "{id}"
category = "{category}"
probe = "{probe}"
image = "{image}"
{extra}
"""


def row(id: str, probe: str, category: str = "server", image: str = MYSQL, extra: str = "") -> str:
    return SERVER_ROW.format(id=id, probe=probe, category=category, image=image, extra=extra)


def failing_checks(report: dict[str, Any], cell_id: str) -> tuple[str, list[str]]:
    (cell,) = [c for c in report["cells"] if c["id"] == cell_id]
    failed = [k["name"] for s in cell["stages"] for k in s["checks"] if k["outcome"] == "fail"]
    return cell["status"], failed


def run_amd64(tmp_path: Path, body: str, only: str, kill_role: str = "", cut_role: str = "") -> dict[str, Any]:
    """One cell on amd64. As soon as the cell's smoke stage starts, the container of
    `kill_role` is killed, and the one of `cut_role` is cut off the cell's network (it
    runs on, unreachable: what a network partition does)."""
    run = Run(
        write_matrix(tmp_path / "m.toml", 'arches = ["amd64"]\nprofile = "smoke"\n' + body), tmp_path, "--only", only
    )
    if kill_role or cut_role:
        run.wait_for_stage("smoke")
        role = kill_role or cut_role
        ids = subprocess.run(
            ["docker", "ps", "-q", "--filter", f"label={run.owner}", "--filter", f"label=ecoready.role={role}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert ids, f"no running {role} container"
        if kill_role:
            subprocess.run(["docker", "kill", *ids], capture_output=True, check=True)
        else:
            (network,) = subprocess.run(
                [
                    "docker",
                    "inspect",
                    "-f",
                    "{{range $name, $_ := .NetworkSettings.Networks}}{{$name}} {{end}}",
                    ids[0],
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            subprocess.run(
                ["docker", "network", "disconnect", "--force", network, ids[0]], capture_output=True, check=True
            )
    code, report = run.finish()
    assert code == 1, report.get("_stderr", "")[-2000:]
    assert docker_labelled(f"ecoready.run={report['run_id']}") == {"containers": [], "networks": [], "volumes": []}
    return report


def test_router_routes_to_a_stopped_server_fail(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    body = row("mysql", "server") + row(
        "router", "router", "load-balancer", "127.0.0.1:5000/lab/mysql-router:9.7", 'backend = "mysql"'
    )
    status, failed = failing_checks(run_amd64(tmp_path, body, "router", kill_role="backend-server"), "router/amd64")
    assert status == "partial" and "crud-through-router" in failed, failed


def test_a_replica_that_filters_the_database_away_does_not_replicate(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    """The replica runs, its threads run, and the rows never arrive: a filter in its options."""
    options = 'options = { flavor = "mysql", args = ["--replicate-ignore-db=ecoready_repl"] }'
    status, failed = failing_checks(
        run_amd64(tmp_path, row("repl", "replication", "ha", extra=options), "repl"), "repl/amd64"
    )
    assert status == "partial" and failed[0] == "rows-replicate", failed


@pytest.mark.slow
def test_group_replication_with_a_member_cut_off_fails_a_check(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    body = row("gr", "group-replication", "ha")
    status, failed = failing_checks(run_amd64(tmp_path, body, "gr", cut_role="node2"), "gr/amd64")
    # node2 is cut off as the checks start. Whenever the cut lands, the failover check,
    # which asks node2 for the new primary once node1 stops, cannot pass: node2 alone is
    # no majority, and expelled it is no member. (Cutting node3 raced: once expelled, the
    # group of node1 and node2 fails over cleanly and every check may pass.)
    assert status == "partial" and "primary-failover" in failed, failed


def test_the_mysql_client_with_its_server_gone_fails_its_checks(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    body = row("mysql", "server") + row(
        "client",
        "shell",
        "shell",
        "127.0.0.1:5000/lab/mysql-client:9.7",
        'backend = "mysql"\noptions = { client = "mysql" }',
    )
    status, failed = failing_checks(run_amd64(tmp_path, body, "client", kill_role="backend-server"), "client/amd64")
    # the kill lands while the checks run (the first ones may be done by then, natively);
    # from the first check that sees the server gone, every later one fails too
    order = ["version", "batch", "error-exit", "xml"]
    assert status == "partial" and failed and failed == order[order.index(failed[0]) :], failed
