"""What each operator's custom resources make (pure data): the parts a resource provisions,
the field naming each part's image and the operator's default when it is empty, read from
the operator's own source at the commit said (`defaults_from`): an operator release may
change them, so a row checked with a default says so. `operators.py` reads resources with it.

A part is a daemon (a server, a proxy, an exporter, a sidecar Kubernetes keeps running)
unless `job` (it runs to completion: an init container, a backup Job). A part the operator
adds as an init container running another part's image is `same_image_as` that part: no
second row, a line naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

Path = tuple[str, ...]  # `name=x` picks the list item named x


@dataclass(frozen=True)
class Part:
    name: str  # "" = the resource's own name (its one server)
    image_at: Path | None  # the field naming its image; None: the operator picks it
    role: str = ""  # a `known.py` name; "" = by its image's name
    default: str = ""  # the image when the field is empty ("" = the operator refuses an empty one); {vars}
    enabled_at: Path | None = None  # None: always there; a mapping there (not a bool) = on
    enabled_default: bool = True
    off_when: Path | None = None  # set there: the part is not made (an external lockserver)
    requires: str | None = None  # another part's name: made only with it
    pod_at: Path | None = None  # where its nodeSelector, affinity and tolerations live
    affinity: Path = ("affinity", "nodeAffinity")
    backend: str | None = None  # the part it works with ("" = the resource's own server)
    services: tuple[str, ...] = ()  # Kubernetes Service names the operator gives it ({name})
    job: bool = False  # runs to completion (an init container, a Job), else a daemon
    image_or: tuple[Path, ...] = ()  # older fields naming the image, tried after `image_at`
    same_image_as: str | None = None  # an init container of that part's image: a line, no row
    what: str = ""  # words for the row's comment ("the galera agent sidecar")


@dataclass(frozen=True)
class Operator:
    group: str  # apiVersion's group
    what: str
    defaults_from: str  # where the defaults below were read
    parts: tuple[Part, ...]
    # {name}s in `Part.default`: (fields tried in turn, else this)
    variables: Mapping[str, tuple[tuple[Path, ...], str]] = field(default_factory=dict)
    note: str = ""
    extra_containers: tuple[Path, ...] = ()  # lists of the user's own containers in its pods
    skip_containers: frozenset[str] = frozenset()  # names in those lists that are parts above


@dataclass(frozen=True)
class Unread:
    """An operator's resource ecoready does not read: said with what the operator makes of it."""

    group: str
    what: str
    defaults_from: str
    images: tuple[str, ...]  # what the operator runs for it by default


_PS = "percona/percona-server-mysql-operator api/v1/perconaservermysql_types.go, pkg/k8s/init_image.go (9adfefaa)"
_PXC = "percona/percona-xtradb-cluster-operator pkg/apis/pxc/v1/pxc_types.go, pkg/k8s/utils.go (b3b0b10a)"
_ORACLE = "mysql/mysql-operator mysqloperator/controller/config.py, innodbcluster/cluster_objects.py (aec777a1)"
_MARIADB = (
    "mariadb-operator/mariadb-operator config/manager/manager.yaml (8970edf8), "
    "its RELATED_IMAGE_* and MARIADB_OPERATOR_IMAGE"
)
_VITESS = "planetscale/vitess-operator pkg/apis/planetscale/v2/defaults.go, vitesscluster_defaults.go (6b0a1b8c)"
_MOCO = "cybozu-go/moco version.go, cmd/moco-controller/cmd/root.go, go.mod (cdfed8a9, MOCO 0.36.0)"
_BITPOKE = "bitpoke/mysql-operator pkg/options/options.go, pkg/util/constants/constants.go (37c64109)"
_PERCONA_AFFINITY = ("affinity", "advanced", "nodeAffinity")


def _percona_init(repository: str) -> Part:
    """The init container Percona's operators add to each pod: the operator's own image at
    the resource's crVersion unless `initContainer.image` (or the older `initImage`) names one."""
    return Part(
        "init",
        ("spec", "initContainer", "image"),
        "",
        f"{repository}:{{cr_version}}",
        image_or=(("spec", "initImage"),),
        job=True,
        what="the init container the operator adds to each pod",
    )


def _percona_proxy(name: str, at: Path, role: str, backend: str) -> Part:
    """A proxy of Percona's operators: off unless `<at>.enabled`, in front of the server."""
    return Part(
        name,
        (*at, "image"),
        role,
        enabled_at=(*at, "enabled"),
        enabled_default=False,
        pod_at=at,
        affinity=_PERCONA_AFFINITY,
        backend=backend,
        services=(f"{{name}}-{name}",),
    )


_PS_PARTS = (
    Part(
        "mysql",
        ("spec", "mysql", "image"),
        "percona-server",
        pod_at=("spec", "mysql"),
        affinity=_PERCONA_AFFINITY,
        services=("{name}-mysql", "{name}-mysql-primary"),
    ),
    _percona_proxy("haproxy", ("spec", "proxy", "haproxy"), "haproxy", "mysql"),
    _percona_proxy("router", ("spec", "proxy", "router"), "mysql-router", "mysql"),
    Part(
        "orchestrator",
        ("spec", "orchestrator", "image"),
        enabled_at=("spec", "orchestrator", "enabled"),
        pod_at=("spec", "orchestrator"),
        enabled_default=False,
        affinity=_PERCONA_AFFINITY,
    ),
    Part("pmm", ("spec", "pmm", "image"), enabled_at=("spec", "pmm", "enabled"), enabled_default=False),
    Part(
        "backup",
        ("spec", "backup", "image"),
        "percona-xtrabackup",
        enabled_at=("spec", "backup", "enabled"),
        backend="mysql",
    ),
    Part("toolkit", ("spec", "toolkit", "image"), "percona-toolkit", backend="mysql"),
    _percona_init("percona/percona-server-mysql-operator"),
)
_PXC_PARTS = (
    Part(
        "pxc",
        ("spec", "pxc", "image"),
        "percona-xtradb-cluster",
        pod_at=("spec", "pxc"),
        affinity=_PERCONA_AFFINITY,
        services=("{name}-pxc",),
    ),
    _percona_proxy("haproxy", ("spec", "haproxy"), "haproxy", "pxc"),
    _percona_proxy("proxysql", ("spec", "proxysql"), "proxysql", "pxc"),
    Part(
        "logcollector",
        ("spec", "logcollector", "image"),
        enabled_at=("spec", "logcollector", "enabled"),
        enabled_default=False,
        what="the log collector sidecar",
    ),
    Part("pmm", ("spec", "pmm", "image"), enabled_at=("spec", "pmm", "enabled"), enabled_default=False),
    Part("backup", ("spec", "backup", "image"), "percona-xtrabackup", backend="pxc"),
    _percona_init("percona/percona-xtradb-cluster-operator"),
)
_ORACLE_PARTS = (
    Part(
        "",
        None,
        "community-server",
        "{repository}/community-server:{version}",
        pod_at=("spec", "podSpec"),
        services=("{name}-instances",),
    ),
    Part(
        "router",
        None,
        "community-router",
        "{repository}/community-router:{router_version}",
        pod_at=("spec", "router", "podSpec"),
        backend="",
        services=("{name}",),
    ),
    Part(
        "sidecar",
        None,
        "",
        "{repository}/community-operator:9.1.0-2.2.2",
        pod_at=("spec", "podSpec"),
        backend="",
        what="the operator's sidecar in each server pod",
    ),
    # the init containers of each server pod (mysqloperator/controller/innodbcluster/cluster_objects.py)
    *(
        Part(init, None, default=image, job=True, same_image_as=part, what="an init container the operator adds")
        for init, image, part in (
            ("fixdatadir", "{repository}/community-operator:9.1.0-2.2.2", "sidecar"),
            ("initconf", "{repository}/community-operator:9.1.0-2.2.2", "sidecar"),
            ("initmysql", "{repository}/community-server:{version}", ""),
        )
    ),
)
_VITESS_PARTS = (
    *(
        Part(part, ("spec", "images", *path), default=default, job=part == "vtbackup", backend=backend)
        for part, path, default, backend in (
            ("vtctld", ("vtctld",), "vitess/lite:latest", None),
            ("vtgate", ("vtgate",), "vitess/lite:latest", None),
            ("vttablet", ("vttablet",), "vitess/lite:latest", None),
            ("vtorc", ("vtorc",), "vitess/lite:latest", None),
            ("vtbackup", ("vtbackup",), "vitess/lite:latest", None),
            ("mysqld", ("mysqld", "mysql80Compatible"), "mysql:8.0.40", None),
            ("mysqld-exporter", ("mysqldExporter",), "prom/mysqld-exporter:v0.18.0", "mysqld"),
        )
    ),
    # DefaultImages names no vtadmin image: the resource must
    Part("vtadmin", ("spec", "images", "vtadmin"), enabled_at=("spec", "vtadmin"), enabled_default=False),
    Part(
        "etcd",
        ("spec", "globalLockserver", "etcd", "image"),
        default="quay.io/coreos/etcd:v3.5.17",
        off_when=("spec", "globalLockserver", "external"),
        what="the global lockserver the operator deploys",
    ),
)
_MARIADB_PARTS = (
    Part("", ("spec", "image"), "mariadb", "mariadb:11.4.5", pod_at=("spec",), services=("{name}", "{name}-primary")),
    Part(
        "exporter",
        ("spec", "metrics", "exporter", "image"),
        "",
        "prom/mysqld-exporter:v0.15.1",
        enabled_at=("spec", "metrics", "enabled"),
        enabled_default=False,
        backend="",
    ),
    Part(
        "maxscale",
        ("spec", "maxScale", "image"),
        "maxscale",
        "mariadb/maxscale:23.08.5",
        enabled_at=("spec", "maxScale", "enabled"),
        enabled_default=False,
        backend="",
        services=("{name}-maxscale",),
        what="the MaxScale the operator provisions (`spec.maxScale`)",
    ),
    Part(
        "maxscale-exporter",
        ("spec", "maxScale", "metrics", "exporter", "image"),
        "",
        "mariadb/maxscale-prometheus-exporter-ubi:v0.0.1",
        enabled_at=("spec", "maxScale", "metrics", "enabled"),
        enabled_default=False,
        requires="maxscale",
        backend="",
    ),
    Part(
        "agent",
        ("spec", "galera", "agent", "image"),
        "",
        "ghcr.io/mariadb-operator/mariadb-operator:0.34.0",
        enabled_at=("spec", "galera", "enabled"),
        enabled_default=False,
        backend="",
        what="the galera agent sidecar",
    ),
    Part(
        "galera-init",
        ("spec", "galera", "initContainer", "image"),
        default="ghcr.io/mariadb-operator/mariadb-operator:0.34.0",
        enabled_at=("spec", "galera", "enabled"),
        enabled_default=False,
        job=True,
        same_image_as="agent",
        what="the galera init container",
    ),
)
_MOCO_MYSQLD = ("spec", "podTemplate", "spec", "containers", "name=mysqld", "image")
_MOCO_PARTS = (
    Part("", _MOCO_MYSQLD, services=("moco-{name}-primary", "moco-{name}-replica", "moco-{name}")),
    Part("agent", None, "", "ghcr.io/cybozu-go/moco-agent:0.16.0", backend="", what="the agent sidecar MOCO adds"),
    Part(
        "slow-log",
        None,
        "",
        "ghcr.io/cybozu-go/moco/fluent-bit:5.0.2.1",
        off_when=("spec", "disableSlowQueryLogContainer"),
        what="the slow query log sidecar MOCO adds",
    ),
    Part(
        "mysqld-exporter",
        None,
        "",
        "ghcr.io/cybozu-go/moco/mysqld_exporter:0.19.0.1",
        enabled_at=("spec", "collectors"),
        enabled_default=False,
        backend="",
        what="the exporter MOCO adds when `spec.collectors` is set",
    ),
    Part("moco-init", _MOCO_MYSQLD, job=True, same_image_as="", what="the init container MOCO adds"),
    Part(
        "copy-moco-init",
        None,
        default="ghcr.io/cybozu-go/moco-agent:0.16.0",
        job=True,
        same_image_as="agent",
        what="the init container MOCO adds",
    ),
)

# kind -> the operator
OPERATORS: Mapping[str, Operator] = {
    "PerconaServerMySQL": Operator(
        "ps.percona.com",
        "Percona Operator for MySQL",
        _PS,
        _PS_PARTS,
        {"cr_version": ((("spec", "crVersion"),), "1.0.0")},
    ),
    "PerconaXtraDBCluster": Operator(
        "pxc.percona.com",
        "Percona Operator for MySQL (XtraDB Cluster)",
        _PXC,
        _PXC_PARTS,
        {"cr_version": ((("spec", "crVersion"),), "1.19.0")},
    ),
    "InnoDBCluster": Operator(
        "mysql.oracle.com",
        "MySQL Operator for Kubernetes",
        _ORACLE,
        _ORACLE_PARTS,
        {
            "repository": ((("spec", "imageRepository"),), "container-registry.oracle.com/mysql"),
            "version": ((("spec", "version"),), "9.1.0"),
            "router_version": ((("spec", "router", "version"), ("spec", "version")), "9.1.0"),
        },
    ),
    "MariaDB": Operator(
        "k8s.mariadb.com",
        "MariaDB operator",
        _MARIADB,
        _MARIADB_PARTS,
        extra_containers=(("spec", "initContainers"), ("spec", "sidecarContainers")),
    ),
    "MaxScale": Operator(
        "k8s.mariadb.com",
        "MariaDB operator",
        _MARIADB,
        (
            Part("", ("spec", "image"), "maxscale", "mariadb/maxscale:23.08.5", pod_at=("spec",), services=("{name}",)),
            Part(
                "exporter",
                ("spec", "metrics", "exporter", "image"),
                "",
                "mariadb/maxscale-prometheus-exporter-ubi:v0.0.1",
                enabled_at=("spec", "metrics", "enabled"),
                enabled_default=False,
            ),
        ),
    ),
    "VitessCluster": Operator(
        "planetscale.com",
        "Vitess operator",
        _VITESS,
        _VITESS_PARTS,
        note="its parts run with the arguments the operator gives them, which the resource does not hold: "
        "each is checked as a plain image (the rows say so); its arch pins live per cell and are not read",
    ),
    "MySQLCluster": Operator(
        "moco.cybozu.com",
        "MOCO",
        _MOCO,
        _MOCO_PARTS,
        extra_containers=(("spec", "podTemplate", "spec", "containers"),),
        skip_containers=frozenset({"mysqld", "agent", "slow-log", "mysqld-exporter"}),
    ),
    "BackupPolicy": Operator(
        "moco.cybozu.com",
        "MOCO",
        _MOCO,
        (
            Part(
                "backup",
                None,
                "",
                "ghcr.io/cybozu-go/moco-backup:0.36.0",
                job=True,
                what="the backup CronJob MOCO runs for the clusters using this policy",
            ),
        ),
    ),
}

# kind -> an operator whose resources are not read, and what it runs for them
UNREAD: Mapping[str, Unread] = {
    "MysqlCluster": Unread(
        "mysql.presslabs.org",
        "bitpoke mysql-operator",
        _BITPOKE,
        (
            "percona@sha256:caab4e854bd75040d07802bf1862bfef1d2b4db0acbc9c4aaf5c21c698fdd393 (percona 5.7.35)",
            "docker.io/bitpoke/mysql-operator-sidecar-5.7:<operator version>",
            "prom/mysqld-exporter:v0.13.0",
        ),
    ),
}
