"""Operators' custom resources -> the stack's services (pure): each resource names the
images of its parts in its own fields; an empty field means the image the operator uses
by default, recorded below as data with where it was read (an operator release may change
it: the row's note says the image is the default, so the user can put their own).

Each part becomes a service named `<resource>-<part>` (the resource's name for its one
server), with what it is (`known.py`), the part it works with, the Kubernetes Service
names the operator gives it (so an app naming them finds its backend), and the arch pins
of the part's pod fields (`kube_pins.py`). Disabled parts are left out and said so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ecoready.stack.kube_pins import read_pins
from ecoready.stack.services import Service

MAX_EXTRA = 32  # a MariaDB's own init and sidecar containers, read so far

_PS = "percona/percona-server-mysql-operator api/v1/perconaservermysql_types.go (9adfefaa): the image is required"
_PXC = "percona/percona-xtradb-cluster-operator pkg/apis/pxc/v1/pxc_types.go (b3b0b10a): the image is required"
_ORACLE = "mysql/mysql-operator mysqloperator/controller/config.py (aec777a1)"
_MARIADB = "mariadb-operator/mariadb-operator config/manager/manager.yaml (8970edf8), RELATED_IMAGE_*"
_VITESS = "planetscale/vitess-operator pkg/apis/planetscale/v2/defaults.go (6b0a1b8c)"
_PERCONA_AFFINITY = ("affinity", "advanced", "nodeAffinity")


@dataclass(frozen=True)
class Part:
    name: str  # "" = the resource's own name (its one server)
    image_at: tuple[str, ...] | None  # the field naming its image; None: the operator picks it
    role: str = ""  # a `known.py` name; "" = by its image's name
    default: str = ""  # the image when the field is empty ("" = the operator refuses an empty one); {vars}
    enabled_at: tuple[str, ...] | None = None  # None: always there
    enabled_default: bool = True
    pod_at: tuple[str, ...] | None = None  # where its nodeSelector, affinity and tolerations live
    affinity: tuple[str, ...] = ("affinity", "nodeAffinity")
    backend: str | None = None  # the part it works with ("" = the resource's own server)
    services: tuple[str, ...] = ()  # Kubernetes Service names the operator gives it ({name})


@dataclass(frozen=True)
class Operator:
    group: str  # apiVersion's group
    what: str
    defaults_from: str  # where the defaults below were read
    parts: tuple[Part, ...]
    # {name}s in `Part.default`: (fields tried in turn, else this)
    variables: Mapping[str, tuple[tuple[tuple[str, ...], ...], str]] = field(default_factory=dict)
    note: str = ""


_PS_PARTS = (
    Part(
        "mysql",
        ("spec", "mysql", "image"),
        "percona-server",
        pod_at=("spec", "mysql"),
        affinity=_PERCONA_AFFINITY,
        services=("{name}-mysql", "{name}-mysql-primary"),
    ),
    Part(
        "haproxy",
        ("spec", "proxy", "haproxy", "image"),
        "haproxy",
        enabled_at=("spec", "proxy", "haproxy", "enabled"),
        enabled_default=False,
        pod_at=("spec", "proxy", "haproxy"),
        affinity=_PERCONA_AFFINITY,
        backend="mysql",
        services=("{name}-haproxy",),
    ),
    Part(
        "router",
        ("spec", "proxy", "router", "image"),
        "mysql-router",
        enabled_at=("spec", "proxy", "router", "enabled"),
        enabled_default=False,
        pod_at=("spec", "proxy", "router"),
        affinity=_PERCONA_AFFINITY,
        backend="mysql",
        services=("{name}-router",),
    ),
    Part(
        "orchestrator",
        ("spec", "orchestrator", "image"),
        enabled_at=("spec", "orchestrator", "enabled"),
        enabled_default=False,
        pod_at=("spec", "orchestrator"),
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
    Part(
        "haproxy",
        ("spec", "haproxy", "image"),
        "haproxy",
        enabled_at=("spec", "haproxy", "enabled"),
        enabled_default=False,
        pod_at=("spec", "haproxy"),
        affinity=_PERCONA_AFFINITY,
        backend="pxc",
        services=("{name}-haproxy",),
    ),
    Part(
        "proxysql",
        ("spec", "proxysql", "image"),
        "proxysql",
        enabled_at=("spec", "proxysql", "enabled"),
        enabled_default=False,
        pod_at=("spec", "proxysql"),
        affinity=_PERCONA_AFFINITY,
        backend="pxc",
        services=("{name}-proxysql",),
    ),
    Part(
        "logcollector",
        ("spec", "logcollector", "image"),
        enabled_at=("spec", "logcollector", "enabled"),
        enabled_default=False,
    ),
    Part("pmm", ("spec", "pmm", "image"), enabled_at=("spec", "pmm", "enabled"), enabled_default=False),
    Part("backup", ("spec", "backup", "image"), "percona-xtrabackup", backend="pxc"),
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
    Part("sidecar", None, "", "{repository}/community-operator:9.1.0-2.2.2", pod_at=("spec", "podSpec")),
)
_VITESS_PARTS = tuple(
    Part(part, ("spec", "images", *field), default=default)
    for part, field, default in (
        ("vtctld", ("vtctld",), "vitess/lite:latest"),
        ("vtgate", ("vtgate",), "vitess/lite:latest"),
        ("vttablet", ("vttablet",), "vitess/lite:latest"),
        ("vtorc", ("vtorc",), "vitess/lite:latest"),
        ("vtbackup", ("vtbackup",), "vitess/lite:latest"),
        ("mysqld", ("mysqld", "mysql80Compatible"), "mysql:8.0.40"),
        ("mysqld-exporter", ("mysqldExporter",), "prom/mysqld-exporter:v0.18.0"),
    )
)

# kind -> the operator
OPERATORS: Mapping[str, Operator] = {
    "PerconaServerMySQL": Operator("ps.percona.com", "Percona Operator for MySQL", _PS, _PS_PARTS),
    "PerconaXtraDBCluster": Operator(
        "pxc.percona.com", "Percona Operator for MySQL (XtraDB Cluster)", _PXC, _PXC_PARTS
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
        (
            Part(
                "",
                ("spec", "image"),
                "mariadb",
                "mariadb:11.4.5",
                pod_at=("spec",),
                services=("{name}", "{name}-primary"),
            ),
            Part(
                "exporter",
                ("spec", "metrics", "exporter", "image"),
                "",
                "prom/mysqld-exporter:v0.15.1",
                enabled_at=("spec", "metrics", "enabled"),
                enabled_default=False,
            ),
        ),
    ),
    "MaxScale": Operator(
        "k8s.mariadb.com",
        "MariaDB operator",
        _MARIADB,
        (Part("", ("spec", "image"), "maxscale", "mariadb/maxscale:23.08.5", pod_at=("spec",), services=("{name}",)),),
    ),
    "VitessCluster": Operator(
        "planetscale.com",
        "Vitess operator",
        _VITESS,
        _VITESS_PARTS,
        note="its parts run with the arguments the operator gives them, which the resource does not hold: "
        "each is checked as a plain image (the rows say so); its arch pins live per cell and are not read",
    ),
}


def _at(node: object, path: Sequence[str]) -> object:
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def read_operator(obj: Mapping[str, object], where: str) -> tuple[list[Service], list[str]] | None:
    """(services, lines) of an operator's resource; None when it is no resource of the
    operators above."""
    kind, api = obj.get("kind"), obj.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api, str):
        return None
    operator = OPERATORS.get(kind)
    if operator is None or api.split("/", 1)[0] != operator.group:
        return None
    found = _at(obj, ("metadata", "name"))
    name = found if isinstance(found, str) and found else kind.lower()
    values = {"name": name}
    for var, (paths, default) in operator.variables.items():
        found = next((v for p in paths if isinstance(v := _at(obj, p), str) and v), default)
        values[var] = found
    notes = [f"{where}: {operator.note}"] if operator.note else []
    services: list[Service] = []
    for part in operator.parts:
        full = f"{name}-{part.name}" if part.name else name
        at = ".".join(part.image_at) if part.image_at else ""
        if part.enabled_at is not None:
            enabled = _at(obj, part.enabled_at)
            if not (enabled if isinstance(enabled, bool) else part.enabled_default):
                notes.append(f"{where}: `{'.'.join(part.enabled_at)}` is off: {part.name} left out")
                continue
        raw = _at(obj, part.image_at) if part.image_at else None
        part_notes: list[str] = []
        if isinstance(raw, str) and raw:
            image = raw
        elif part.default:
            image = part.default.format(**values)
            said = f"`{at}` is empty" if at else "the resource names no image"
            part_notes.append(
                f"{where}: {said}: checked with the operator's default {image} (as of {operator.defaults_from})"
            )
        else:
            notes.append(
                f"{where}: `{at}` is empty and the operator has no default ({operator.defaults_from}): left out"
            )
            continue
        pod = _at(obj, part.pod_at) if part.pod_at else None
        pins = read_pins(pod, ".".join(part.pod_at or ()), part.affinity) if isinstance(pod, dict) else None
        depends = (f"{name}-{part.backend}" if part.backend else name,) if part.backend is not None else ()
        if kind == "MaxScale":
            ref = _at(obj, ("spec", "mariaDbRef", "name"))
            depends = (ref,) if isinstance(ref, str) and ref else ()
        services.append(
            Service(
                name=full,
                image=image,
                role=part.role,
                depends_on=depends,
                aliases=tuple(s.format(**values) for s in part.services),
                platform=pins.platform if pins else "",
                pinned_by=f"{' and '.join(pins.by)} ({where})" if pins else "",
                pinned_at=tuple(f"{where}: {p}" for p in pins.places) if pins and pins.platform else (),
                notes=(*part_notes, *(f"{where}: {n}" for n in (pins.notes if pins else ()))),
            )
        )
    if kind == "MariaDB":
        services.extend(_extra_containers(obj, name, where, notes))
    return services, notes


def _extra_containers(obj: Mapping[str, object], name: str, where: str, notes: list[str]) -> list[Service]:
    """A MariaDB's own `initContainers` and `sidecarContainers`: plain images in its pod."""
    found = []
    for key in ("initContainers", "sidecarContainers"):
        items = _at(obj, ("spec", key))
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items[:MAX_EXTRA]):
            image = item.get("image") if isinstance(item, dict) else None
            cname = item.get("name") if isinstance(item, dict) else None
            if not isinstance(image, str) or not image:
                notes.append(f"{where}: `spec.{key}[{i}]` names no image: left out")
                continue
            label = cname if isinstance(cname, str) and cname else f"{key}-{i}"
            found.append(
                Service(
                    name=f"{name}-{label}",
                    image=image,
                    notes=(
                        f"{where}: `spec.{key}[{i}]` runs in the MariaDB pod: its command and environment are not read",
                    ),
                )
            )
    return found
