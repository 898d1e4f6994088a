"""Images ecoready knows, by the last part of their repository's name: which probe kind
checks each, its category and options, and why (for the row's comment). The upstream
images of matrix.toml and the lab's images (`127.0.0.1:5000/lab/<name>`) are named alike,
so one table serves both; a private registry's mirror of them too."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ecoready.domain.model import Category


@dataclass(frozen=True)
class Known:
    probe: str
    category: Category
    what: str  # "MariaDB server", for the row's comment
    options: Mapping[str, Any] = field(default_factory=dict)


def _server(flavor: str, what: str) -> Known:
    return Known("server", Category.SERVER, what, {"flavor": flavor})


# The repository's last name part -> what it is (docker.io/library/mariadb, quay.io/x/mariadb,
# 127.0.0.1:5000/lab/mariadb all end in `mariadb`).
KNOWN: Mapping[str, Known] = {
    "mariadb": _server("mariadb", "MariaDB server"),
    "mysql": _server("mysql", "MySQL server"),
    "mysql-server": _server("mysql", "MySQL server"),
    "community-server": _server("mysql", "MySQL server (Oracle's registry)"),
    "percona-server": _server("percona", "Percona Server"),
    "percona": _server("percona", "Percona Server"),
    "percona-xtradb-cluster": Known("pxc", Category.HA, "Percona XtraDB Cluster"),
    "proxysql": Known("proxysql", Category.LOAD_BALANCER, "ProxySQL"),
    "maxscale": Known("maxscale", Category.LOAD_BALANCER, "MariaDB MaxScale"),
    "mysql-router": Known("router", Category.LOAD_BALANCER, "MySQL Router"),
    "community-router": Known("router", Category.LOAD_BALANCER, "MySQL Router (Oracle's registry)"),
    "haproxy": Known("haproxy", Category.LOAD_BALANCER, "HAProxy in front of MySQL"),
    "pmm-server": Known("pmm", Category.MONITORING, "PMM server"),
    "percona-xtrabackup": Known("xtrabackup", Category.BACKUP, "Percona XtraBackup"),
    "mydumper": Known("mydumper", Category.BACKUP, "mydumper/myloader"),
    "percona-toolkit": Known("toolkit", Category.TOOLKIT, "Percona Toolkit"),
    "mysql-shell": Known("shell", Category.SHELL, "MySQL Shell", {"client": "mysqlsh"}),
    "mariadb-client": Known("shell", Category.SHELL, "MariaDB client", {"client": "mariadb"}),
}


def repository_name(reference: str) -> str:
    """The last part of an image reference's repository, lower case: `mariadb` for
    `127.0.0.1:5000/lab/mariadb:10.11@sha256:…`."""
    path = reference.split("@", 1)[0]
    last = path.rsplit("/", 1)[-1]
    return last.split(":", 1)[0].lower()


def known(reference: str) -> Known | None:
    return KNOWN.get(repository_name(reference))


# Images whose entrypoint reads a password from a file named by `<VARIABLE>_FILE` (the
# official images' convention): the repository's last name part -> those variables. ecoready
# gives passwords only as files, so init writes `<VARIABLE>_FILE = "{password_file}"`.
FILE_SECRETS: Mapping[str, frozenset[str]] = {
    "wordpress": frozenset({"WORDPRESS_DB_PASSWORD"}),
    "nextcloud": frozenset({"MYSQL_PASSWORD"}),
}

# `restart:` policies that keep a container up: the service is a daemon, not a job
DAEMON_RESTARTS = frozenset({"always", "unless-stopped"})
