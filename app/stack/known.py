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


# The ports a known proxy takes clients on by default (a compose file may not publish or
# expose them): an app's `DB_PORT` of one of them, beside a host rewritten to the server,
# is the server's port too. ProxySQL: mysql-ifaces 0.0.0.0:6033; MaxScale: the listeners
# of the image's sample config, 4006 (read-write split) and 4008 (read connection router);
# MySQL Router: 6446-6449 (classic and X, read-write and read-only, its bootstrap's ports).
CLIENT_PORTS: Mapping[str, tuple[int, ...]] = {
    "proxysql": (6033,),
    "maxscale": (4006, 4008),
    "router": (6446, 6447, 6448, 6449),
}


def repository_name(reference: str) -> str:
    """The last part of an image reference's repository, lower case: `mariadb` for
    `127.0.0.1:5000/lab/mariadb:10.11@sha256:…`."""
    path = reference.split("@", 1)[0]
    last = path.rsplit("/", 1)[-1]
    return last.split(":", 1)[0].lower()


# Other names vendors publish a known component under (the last part of the repository):
# Percona's ProxySQL 2 and 3 images, Bitnami's and the MariaDB Foundation's, Oracle's
# package names. `bitnami/mysql`, `percona/percona-server`, `mysql/mysql-server` and
# `container-registry.oracle.com/mysql/community-server` end in names KNOWN holds.
VENDOR_NAMES: Mapping[str, str] = {
    "proxysql2": "proxysql",
    "proxysql3": "proxysql",
    "mariadb-server": "mariadb",
    "mariadb-devel": "mariadb",
    "mysql-community-server": "mysql",
    "percona-server-mysql": "percona-server",
    "mysqlrouter": "mysql-router",
    "xtrabackup": "percona-xtrabackup",
    "pt": "percona-toolkit",
    "pmm": "pmm-server",
}
# Percona's operators publish their components as tags of the operator's repository
# (`percona/percona-xtradb-cluster-operator:1.15.0-proxysql`): the tag's last part says which
OPERATOR_TAGS: Mapping[str, str] = {
    "proxysql": "proxysql",
    "haproxy": "haproxy",
    "router": "mysql-router",
    "toolkit": "percona-toolkit",
}


def known(reference: str) -> Known | None:
    name = repository_name(reference)
    found = KNOWN.get(VENDOR_NAMES.get(name, name))
    if found is None and name.endswith("-operator"):
        tag = reference.split("@", 1)[0].rsplit("/", 1)[-1].partition(":")[2].lower()
        part = OPERATOR_TAGS.get(tag.rsplit("-", 1)[-1]) if "-" in tag else None
        found = KNOWN.get(part) if part else None
    return found


# Images whose entrypoint reads a password from a file named by `<VARIABLE>_FILE` (the
# official images' convention): the repository's last name part -> those variables. ecoready
# gives passwords only as files, so init writes `<VARIABLE>_FILE = "{password_file}"`.
FILE_SECRETS: Mapping[str, frozenset[str]] = {
    "wordpress": frozenset({"WORDPRESS_DB_PASSWORD"}),
    "nextcloud": frozenset({"MYSQL_PASSWORD"}),
}

# `restart:` policies that keep a container up: the service is a daemon, not a job
DAEMON_RESTARTS = frozenset({"always", "unless-stopped"})

# `Service.role` for a service checked by the generic probe whatever its image (an init
# container that runs a server's image with a script and exits: not a server); no KNOWN key
GENERIC_ROLE = "command"
