"""The probe kinds a matrix may name, described without importing their modules.

`KINDS` says, for each kind: how far it was verified (`verified`: `lab`, run here against
the real software in the lab's images, or `contract`, written from the image's documented
contract only: docs/image-contracts.md; `contract_when` names option values
that take a lab-verified kind off the path the lab ran: MySQL Shell), the module that
implements it (`ecoready.probes.<kind>`, imported only when a run needs it), whether it
needs a backend server, whether it can be one, whether it is benchmarked, the options it
accepts in `[components.options]`, and its main programs (what the build audit reads in
the image). The matrix loader and the planner read it; `ecoready validate` never imports
a probe.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ecoready.domain.model import Verification
from ecoready.matrix.command_options import COMMAND_MODES, Problems, check_command_options

LAB, CONTRACT = Verification.LAB, Verification.CONTRACT


@dataclass(frozen=True)
class ProbeKind:
    name: str
    module: str
    # Verified against the real software here (the lab), or written from the image's
    # documented contract only; every kind says (tests/unit/test_default_matrix.py).
    verified: Verification | None = None
    # option -> values with which the probe runs what the lab never ran (MySQL Shell, in
    # no Debian suite): contract-only then, whatever `verified` says
    contract_when: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    needs_backend: bool = False
    serves_sql: bool = False  # other components may name it as their backend
    benchmarks: bool = False  # has a bench stage (sysbench) unless the profile is smoke
    options: Mapping[str, type | tuple[type, ...]] = field(default_factory=dict)
    required: tuple[str, ...] = ()  # options that must be given
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # allowed values of an option
    # The option naming a package the probe installs from its registry (`driver`): a row
    # that gives it gets the packaging stage (app/domain/drivers.py reads the spec).
    installs: str | None = None
    # A kind whose `installs` option names one program's source, not a driver: the one
    # (registry, package) the option may name (gh-ost's Go module). Its packaging stage
    # resolves the version and reads no artifact (the install builds it from source).
    program: tuple[str, str] | None = None
    # (options, has a backend) -> problems below `options` that their types do not show
    check: Callable[[Mapping[str, Any], bool], Problems] | None = None
    # an option holding the smoke stage's own time limit (native seconds): the stage's
    # budget grows to hold it
    smoke_limit: str = ""
    # The main programs the build audit reads in the image, each as the names it goes by
    # (the first found is read): none for kinds whose programs are scripts or the user's.
    programs: tuple[tuple[str, ...], ...] = ()


_SERVER_OPTIONS: Mapping[str, type | tuple[type, ...]] = {
    "flavor": str,  # mariadb | mysql | percona: which env/client names the image uses
    "args": list,  # extra server arguments
    "env": dict,  # extra environment (never secrets: those are generated per run)
}

_FLAVOR: Mapping[str, type | tuple[type, ...]] = {"flavor": str}
_FLAVOR_CHOICES: Mapping[str, tuple[str, ...]] = {"flavor": ("mariadb", "mysql", "percona")}

# The connector probe's languages: one smoke program each in the connectors image
# (Python twice: one program, two drivers); `python` is a driver row's (`driver = "pypi:..."`).
CONNECTOR_LANGUAGES = (
    "c",
    "cpp",
    "java",
    "python-pymysql",
    "python-mysqlclient",
    "python",
    "go",
    "nodejs",
    "php",
    "perl",
    "ruby",
)

# The drivers the smoke programs speak, per language of a driver row (by package name,
# lowercase); () = any (every JDBC driver speaks java.sql).
SMOKE_DRIVERS: Mapping[str, tuple[str, ...]] = {
    "python": ("pymysql", "mysqlclient", "mysql-connector-python", "mariadb"),
    "nodejs": ("mysql", "mysql2", "mariadb", "@mysql/xdevapi"),  # the last over the X Protocol
    "java": (),
    "go": ("github.com/go-sql-driver/mysql",),
}

_CONNECTOR_OPTIONS: Mapping[str, type | tuple[type, ...]] = {
    "language": str,  # which smoke program runs (CONNECTOR_LANGUAGES)
    "driver": str,  # a driver from its registry: "pypi:mysqlclient==2.2.*" (app/domain/drivers.py)
    "password": str,  # a literal the connector uses instead of the backend's password (failure tests)
}

# The dump probe's tools: MySQL's and MariaDB's (MariaDB 11.0 and later images have no
# `mysqldump` name); each loads with the client of its own image (probes/dump.py).
DUMP_TOOLS = ("mysqldump", "mariadb-dump")

_SERVER = (("mariadbd", "mysqld"),)
_MYSQLD = (("mysqld",),)

# The generic probe: any image, run once (passes on exit 0) or kept up (passes when healthy).
_COMMAND_OPTIONS: Mapping[str, type | tuple[type, ...]] = {
    "mode": str,  # run (default) | service
    "command": list,  # the container's command (default: the image's)
    "entrypoint": list,
    "env": dict,  # name -> value with placeholders ({host}, {password_file}, ...)
    "files": dict,  # absolute path -> content
    "port": int,  # service: ready when this TCP port listens
    "healthcheck": list,  # service: Docker's test, e.g. ["CMD", "curl", "-f", "http://localhost/"]
    "limit": (int, float),  # run: seconds the command may take (native; scaled for emulation)
    "user": str,
    "database": str,  # created on the backend for the app (default ecoready_app)
    # "contract": what the row runs was written from the image's documentation and never run
    # here (the default matrix's generic rows); the report then says contract, not lab
    "verified": str,
}

KINDS: Mapping[str, ProbeKind] = {
    k.name: k
    for k in (
        ProbeKind(
            "server",
            "ecoready.probes.server",
            verified=LAB,  # MariaDB and MySQL 9.7 of the lab; the Percona flavor's path on the lab's MariaDB
            serves_sql=True,
            benchmarks=True,
            options=_SERVER_OPTIONS,
            choices=_FLAVOR_CHOICES,
            programs=_SERVER,
        ),
        ProbeKind(
            "proxysql", "ecoready.probes.proxysql", verified=CONTRACT, needs_backend=True, programs=(("proxysql",),)
        ),
        ProbeKind(
            "maxscale", "ecoready.probes.maxscale", verified=CONTRACT, needs_backend=True, programs=(("maxscale",),)
        ),
        ProbeKind("router", "ecoready.probes.router", verified=LAB, needs_backend=True, programs=(("mysqlrouter",),)),
        # The server it monitors is the backend; the client image is part of the component.
        ProbeKind(
            "pmm",
            "ecoready.probes.pmm",
            verified=CONTRACT,
            needs_backend=True,
            options={"client_image": str},
            programs=(("pmm-managed",),),
        ),
        # `client` picks the check set: MySQL Shell, or a classic client (mariadb, mysql).
        ProbeKind(
            "shell",
            "ecoready.probes.shell",
            verified=LAB,  # the classic clients of the lab's client image; MySQL Shell is not there
            contract_when={"client": ("mysqlsh",)},
            needs_backend=True,
            options={"client": str},
            choices={"client": ("mysqlsh", "mariadb", "mysql")},
            programs=(("mysqlsh", "mariadb", "mysql"),),
        ),
        ProbeKind(
            "galera",
            "ecoready.probes.galera",
            verified=LAB,
            serves_sql=True,
            options=_FLAVOR,
            choices=_FLAVOR_CHOICES,
            programs=_SERVER,
        ),
        # Percona XtraDB Cluster: the image's own CLUSTER_NAME/CLUSTER_JOIN contract.
        ProbeKind("pxc", "ecoready.probes.pxc", verified=CONTRACT, serves_sql=True, programs=_MYSQLD),
        # `flavor` picks the replication dialect (MariaDB's or MySQL's statements); `args`
        # go to both servers after the probe's own (e.g. a buffer pool size, a filter).
        ProbeKind(
            "replication",
            "ecoready.probes.replication",
            verified=LAB,  # both dialects: MariaDB's and MySQL 9.7's
            serves_sql=True,
            options={"flavor": str, "args": list},
            choices=_FLAVOR_CHOICES,
            programs=_SERVER,
        ),
        ProbeKind(
            "group-replication", "ecoready.probes.group_replication", verified=LAB, serves_sql=True, programs=_MYSQLD
        ),
        ProbeKind(
            "mariabackup",
            "ecoready.probes.mariabackup",
            verified=LAB,
            options=_FLAVOR,
            choices=_FLAVOR_CHOICES,
            programs=(("mariadb-backup", "mariabackup"),),
        ),
        # The backend names the server image XtraBackup backs up (its line must match).
        ProbeKind(
            "xtrabackup",
            "ecoready.probes.xtrabackup",
            verified=CONTRACT,
            needs_backend=True,
            programs=(("xtrabackup",),),
        ),
        ProbeKind(
            "mydumper",
            "ecoready.probes.mydumper",
            verified=LAB,
            needs_backend=True,
            programs=(("mydumper",), ("myloader",)),
        ),
        # The server's own logical dump tool (`tool`: mysqldump or mariadb-dump) and the
        # client of the same image that loads the dump; the audit reads the first found.
        ProbeKind(
            "dump",
            "ecoready.probes.dump",
            verified=LAB,  # mysqldump 9.7 of the lab's MySQL, mariadb-dump of its MariaDB 10.11 and 11.8
            needs_backend=True,
            options={"tool": str},
            required=("tool",),
            choices={"tool": DUMP_TOOLS},
            programs=(("mariadb-dump", "mysqldump"), ("mariadb", "mysql")),
        ),
        # percona-toolkit is Perl: no program of its own to audit
        ProbeKind("toolkit", "ecoready.probes.toolkit", verified=LAB, needs_backend=True),
        ProbeKind(
            "haproxy",
            "ecoready.probes.haproxy",
            verified=LAB,
            needs_backend=True,
            benchmarks=True,
            programs=(("haproxy",),),
        ),
        ProbeKind(
            "connector",
            "ecoready.probes.connector",
            verified=LAB,  # the smoke programs and drivers of the lab's connector images
            needs_backend=True,
            options=_CONNECTOR_OPTIONS,
            required=("language",),
            choices={"language": CONNECTOR_LANGUAGES},
            installs="driver",
        ),
        # gh-ost (GitHub's online schema migration) built from its Go module into the official
        # Go image (`install = "go:github.com/github/gh-ost@v1.1.8"`: no image is published),
        # altering a table of its own on the backend MySQL.
        ProbeKind(
            "ghost",
            "ecoready.probes.ghost",
            verified=LAB,  # gh-ost's source from the Go module proxy, the lab's Go 1.27 and MySQL 9.7
            needs_backend=True,
            options={"install": str},
            required=("install",),
            installs="install",
            program=("go", "github.com/github/gh-ost"),
        ),
        # The backend is optional: its details reach the image through placeholders.
        ProbeKind(
            "command",
            "ecoready.probes.command",
            verified=LAB,  # the generic probe: the user's own image, run as the lab's tests run it
            contract_when={"verified": ("contract",)},
            options=_COMMAND_OPTIONS,
            choices={"mode": COMMAND_MODES, "verified": ("contract",)},
            check=check_command_options,
            smoke_limit="limit",
        ),
    )
}


def verification(kind: ProbeKind, options: Mapping[str, Any]) -> Verification | None:
    """How far a row's probe was verified: its kind's, unless its options take it where the
    lab never ran it (`contract_when`)."""
    for option, values in kind.contract_when.items():
        if options.get(option) in values:
            return Verification.CONTRACT
    return kind.verified
