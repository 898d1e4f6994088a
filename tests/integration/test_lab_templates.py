"""The lab's MySQL and MariaDB images copy a data directory initialised when the image was
built instead of initialising one in every container, and initialise for real when the
server's arguments change what initialising makes. Both paths, on amd64 (native: the
arm64 images run the same entrypoint)."""

from __future__ import annotations

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
