"""The lab's MySQL and MariaDB images copy a data directory initialised when the image was
built instead of initialising one in every container, and initialise for real when the
server's arguments change what initialising makes. Without init scripts the real server
runs the set-up from its --init-file (one server start); with them a temporary server runs
them first, as in the official images. Every path on amd64 (native: the arm64 images run
the same entrypoints). The MySQL image's init scripts: tests/integration/test_lab_mysql.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.lab_containers import logs, sql, start, until_ready

pytestmark = pytest.mark.docker

IMAGES = {
    "mysql:9.7": "MYSQL_ROOT_PASSWORD",
    "mariadb:10.11": "MARIADB_ROOT_PASSWORD",
    "mariadb:11.8": "MARIADB_ROOT_PASSWORD",
}
COPIED = "Copying the initialized database files of /usr/share/"
INITIALISED = "Initializing database files"
RSA_PUBLIC_KEY = "SHOW STATUS LIKE 'Caching_sha2_password_rsa_public_key'"
ONE_START = "No init scripts: the server runs the set-up from its --init-file"
TEMPORARY = "Starting temporary server"


@pytest.mark.parametrize("image", list(IMAGES))
def test_the_template_is_copied_unless_the_arguments_change_what_initialising_makes(
    lab: Path, network: str, image: str
) -> None:
    local = f"ecoready-lab/{image}-amd64"
    password = f"{IMAGES[image]}=pw"
    first = start(network, "-e", password, local)
    second = start(network, "-e", password, local)
    folded = start(network, "-e", password, local, "--lower-case-table-names=1")
    for server in (first, second, folded):
        until_ready(server, password="pw")

    for server in (first, second):
        text = logs(server)
        assert COPIED in text and INITIALISED not in text, text[-3000:]
    # lower_case_table_names is fixed when the system tables are made: the copy would not do
    text = logs(folded)
    assert INITIALISED in text and COPIED not in text, text[-3000:]
    assert sql(folded, "SELECT @@lower_case_table_names", password="pw") == "1"

    if image.startswith("mysql"):  # a server's own identity is made at its first start, not copied
        uuids = {sql(s, "SELECT @@server_uuid", password="pw") for s in (first, second)}
        assert len(uuids) == 2
        keys = {sql(s, RSA_PUBLIC_KEY, password="pw") for s in (first, second)}
        assert len(keys) == 2


@pytest.mark.parametrize("image", list(IMAGES))
def test_without_init_scripts_the_server_sets_itself_up_in_one_start(lab: Path, network: str, image: str) -> None:
    local = f"ecoready-lab/{image}-amd64"
    prefix = IMAGES[image].split("_")[0]  # MYSQL or MARIADB
    # quotes, a backslash, line breaks and a comment sign survive the one-line SQL
    root_pw, user_pw = "r00t'\"pw\\\n#x", "us3r'\"pw\r\nx"
    server = start(
        network,
        *("-e", f"{prefix}_ROOT_PASSWORD={root_pw}", "-e", f"{prefix}_DATABASE=app"),
        *("-e", f"{prefix}_USER=appuser", "-e", f"{prefix}_PASSWORD={user_pw}"),
        local,
        "--max-connections=77",
    )
    until_ready(server, password=root_pw)
    text = logs(server)
    assert ONE_START in text and TEMPORARY not in text, text[-3000:]
    assert sql(server, "SELECT CURRENT_USER(), DATABASE()", user="appuser", password=user_pw, database="app") == (
        "appuser@%\tapp"
    )
    assert sql(server, "SELECT @@max_connections", password=root_pw) == "77"
    # the set-up came through a pipe the server read to its end: no copy of the passwords stays
    pipe = subprocess.run(
        ["docker", "exec", "-u", "mysql", server, "cat", "/proc/1/fd/3"], capture_output=True, text=True, timeout=30
    )
    assert pipe.returncode == 0 and pipe.stdout == "", pipe
    if image.startswith("mysql"):  # the binary log is on: the set-up is not in it
        assert sql(server, "SELECT @@log_bin, @@gtid_executed = ''", password=root_pw) == "1\t1"
    else:  # the official image's healthcheck passes against the one server
        health = subprocess.run(
            ["docker", "exec", server, "healthcheck.sh", "--connect"], capture_output=True, timeout=30
        )
        assert health.returncode == 0, health


@pytest.mark.parametrize("image", [i for i in IMAGES if i.startswith("mariadb")])
def test_init_scripts_run_on_a_temporary_server_first(lab: Path, network: str, tmp_path: Path, image: str) -> None:
    initdb = tmp_path / "initdb"
    initdb.mkdir()
    (initdb / "1-schema.sql").write_text("CREATE TABLE t (id INT PRIMARY KEY);\n")
    insert = 'mariadb -uroot -p"$MARIADB_ROOT_PASSWORD" app -e "INSERT INTO t VALUES (1), (2)"'
    (initdb / "2-rows.sh").write_text(insert + "\n")
    password = "pw'\"\\\n#x"  # the .sql file runs with it from an option file: quoted and escaped there
    server = start(
        network,
        *("-e", f"MARIADB_ROOT_PASSWORD={password}", "-e", "MARIADB_DATABASE=app"),
        *("-v", f"{initdb}:/docker-entrypoint-initdb.d:ro"),
        f"ecoready-lab/{image}-amd64",
    )
    until_ready(server, password=password)
    text = logs(server)
    assert TEMPORARY in text and ONE_START not in text, text[-3000:]
    # the temporary server never listened on TCP
    assert "port: 0" in text and "port: 3306" in text
    assert sql(server, "SELECT COUNT(*) FROM t", password=password, database="app") == "2"
