"""`ecoready init --from` on Kubernetes manifests: real ones from public repositories
(tests/data/k8s, each with its source and commit in its header) and a hand-written set with
every arch pin ecoready reads. Each workload lands on its probe, secrets are never read into
the matrix, the pins reach the migration plan with their YAML paths, and hostile YAML
(aliases, huge documents, unknown kinds) costs bounded time with a line per thing."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest

from ecoready.domain.errors import ConfigError
from ecoready.domain.model import ComponentOrigin, Status
from ecoready.matrix.load import load
from ecoready.report import json as json_report
from ecoready.report import markdown
from ecoready.report.migration import plan_pins, plan_steps
from ecoready.stack.kube import MAX_BYTES, MAX_DOCUMENTS, is_kubernetes, parse_kubernetes, read_kubernetes
from ecoready.stack.kube_pins import read_pins
from ecoready.stack.mapping import map_services
from tests.support.cli import ecoready
from tests.unit.test_migration_plan import cell, report

DATA = Path(__file__).parent.parent / "data" / "k8s"
HAND = DATA / "hand-written-pins.yaml"

# file -> {row id: (probe, backend)} as `init` writes them
EXPECTED: dict[str, dict[str, tuple[str, str | None]]] = {
    "percona-server-mysql-operator-cr.yaml": {
        "ps-cluster1-mysql": ("server", None),
        "ps-cluster1-haproxy": ("haproxy", "ps-cluster1-mysql"),
        "ps-cluster1-backup": ("xtrabackup", "ps-cluster1-mysql"),
        "ps-cluster1-toolkit": ("toolkit", "ps-cluster1-mysql"),
        "ps-cluster1-init": ("command", None),  # the operator's init container, its image by crVersion
    },
    "percona-xtradb-cluster-operator-cr.yaml": {
        "cluster1-pxc": ("pxc", None),
        "cluster1-haproxy": ("haproxy", "cluster1-pxc"),
        "cluster1-logcollector": ("command", None),
        "cluster1-backup": ("xtrabackup", "cluster1-pxc"),
        "cluster1-init": ("command", None),
    },
    "mysql-operator-sample-cluster.yaml": {
        "mycluster": ("server", None),
        "mycluster-router": ("router", "mycluster"),
        "mycluster-sidecar": ("command", "mycluster"),  # the operator's sidecar in the server's pod
    },
    "mariadb-operator-mariadb-init-and-sidecar.yaml": {
        "mariadb": ("server", None),
        "mariadb-init": ("command", None),
        "mariadb-sidecar": ("command", None),
    },
    "vitess-operator-101-initial-cluster.yaml": {
        f"example-{part}": ("command", None)
        for part in ("vtctld", "vtgate", "vttablet", "vtorc", "vtbackup", "mysqld", "mysqld-exporter", "etcd")
    },
    "helm-bitnami-mysql": {"db01-mysql": ("server", None)},
}


def init(tmp_path: Path, source: Path, *more: str) -> tuple[Path, str]:
    out = tmp_path / f"{source.stem}.toml"
    result = ecoready("init", "--from", str(source), "-o", str(out), *more)
    assert result.returncode == 0, result.stderr
    assert ecoready("validate", str(out)).returncode == 0
    return out, result.stderr


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_manifests_land_on_their_probes_and_validate(tmp_path: Path, name: str) -> None:
    source = DATA / name
    if source.is_file():
        assert source.read_text().startswith("# Source: https://github.com/")  # where it was taken from
    out, _ = init(tmp_path, source)
    rows = {c.id: (c.probe, c.backend) for c in load(out).components}
    assert rows == EXPECTED[name]


def test_operator_defaults_are_said_as_such_with_their_source(tmp_path: Path) -> None:
    out, stderr = init(tmp_path, DATA / "mysql-operator-sample-cluster.yaml")
    images = {c.id: c.image for c in load(out).components}
    assert images["mycluster"] == "container-registry.oracle.com/mysql/community-server:9.1.0"
    assert images["mycluster-router"] == "container-registry.oracle.com/mysql/community-router:9.1.0"
    text = out.read_text()
    assert "checked with the operator's default container-registry.oracle.com/mysql/community-server:9.1.0" in text
    assert "mysqloperator/controller/config.py" in stderr
    # a field the resource sets is taken as it is; disabled parts are said to be left out
    _, percona = init(tmp_path, DATA / "percona-server-mysql-operator-cr.yaml")
    off = "`spec.proxy.router.enabled` is off: router (perconalab/percona-server-mysql-operator:main-router8.4)"
    assert f"{off} left out" in percona


def test_a_folder_of_operator_resources_wires_maxscale_to_its_mariadb(tmp_path: Path) -> None:
    folder = tmp_path / "mariadb"
    folder.mkdir()
    for name in ("mariadb-operator-mariadb-galera.yaml", "mariadb-operator-maxscale-galera.yaml"):
        (folder / name).write_text((DATA / name).read_text())
    out, _ = init(tmp_path, folder)
    rows = {c.id: (c.probe, c.backend, c.image) for c in load(out).components}
    assert rows["maxscale-galera"] == ("maxscale", "mariadb-galera", "mariadb/maxscale:23.08.5")
    assert rows["mariadb-galera"] == ("server", None, "mariadb:11.4.5")


def test_the_helm_chart_folder_reads_the_statefulset_and_never_its_secret(tmp_path: Path) -> None:
    out, stderr = init(tmp_path, DATA / "helm-bitnami-mysql")
    (row,) = load(out).components
    assert (row.image, row.options["flavor"]) == ("docker.io/bitnami/mysql:8.0.25-debian-10-r16", "mysql")
    text = out.read_text()
    assert "cGFzc3dvcmQ=" not in text and "cGFzc3dvcmQ=" not in stderr  # the Secret's data
    assert "Secret/db01-mysql: not read" in stderr
    assert "`MYSQL_ROOT_PASSWORD` comes from Secret db01-mysql, key mysql-root-password: not read" in stderr
    assert "Konvert" not in stderr  # its kustomization does not list konvert.yaml: kustomize leaves it out


def test_hand_written_pins_are_read_with_their_yaml_paths(tmp_path: Path) -> None:
    out, stderr = init(tmp_path, HAND)
    rows = {c.id: c for c in load(out).components}
    assert {k: (c.probe, c.backend, c.platform) for k, c in rows.items()} == {
        "db": ("server", None, "linux/amd64"),
        "proxysql": ("proxysql", "db", "linux/amd64"),
        "app-migrate": ("command", None, "linux/arm64"),
        "app-web": ("command", "db", "linux/arm64"),
        "app-pmm-client": ("command", None, "linux/arm64"),
        "backup": ("xtrabackup", "db", "linux/amd64"),
        "tools": ("toolkit", "db", ""),
    }
    f = "hand-written-pins.yaml"
    assert rows["db"].pinned_at == (f'{f} StatefulSet/db: spec.template.spec.nodeSelector["kubernetes.io/arch"]',)
    affinity = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
    assert rows["proxysql"].pinned_at == (
        f"{f} Deployment/proxysql: spec.template.spec.{affinity}.matchExpressions[1]",
    )
    assert rows["backup"].pinned_at == (
        f"{f} CronJob/backup: spec.jobTemplate.spec.template.spec.{affinity}.matchExpressions[0]",
    )
    preferred = (
        "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0]"
    )
    assert rows["app-web"].pinned_at == (
        f"{f} Deployment/app: spec.template.spec.{preferred}",
        f"{f} Deployment/app: spec.template.spec.tolerations[0]",
    )
    # the app's backend reached by its Service's long name and a JDBC URL, as placeholders
    env = rows["app-web"].options["env"]
    assert env["DB_HOST"] == "{host}" and env["JDBC_URL"] == "jdbc:mysql://{host}:{port}/{database}"
    assert rows["app-web"].options["healthcheck"] == ["CMD", "/shop", "health"]
    assert rows["db"].options["args"] == ["--character-set-server=utf8mb4"]
    text = out.read_text()
    assert "hand-root-secret-1" not in text and "hand-shop-secret-2" not in text
    assert "hand-root-secret-1" not in stderr and "hand-shop-secret-2" not in stderr
    assert "`DB_PASSWORD` comes from Secret shop-db, key password: not read" in stderr
    assert "`GREETING` uses $(VAR) expansion" in stderr and "`POD_IP` is set by Kubernetes" in stderr
    assert "Pod/tools: `spec.tolerations[0]` tolerates the arm64 nodes' taint" in stderr
    assert (
        "PostgresCluster/reports (postgres-operator.crunchydata.com/v1beta1): a kind ecoready does not read" in stderr
    )


def test_the_plan_lists_which_pins_can_go_with_their_yaml_paths(tmp_path: Path) -> None:
    """The matrix `init` wrote, run (constructed cells): db ready on arm64 -> its
    nodeSelector can go; backup missing on arm64 -> its affinity stays."""
    out, _ = init(tmp_path, HAND)
    components = {c.id: c for c in load(out).components}
    origins = [
        ComponentOrigin(c.id, c.image, c.service, c.platform, c.pinned_at)
        for c in components.values()
        if c.id in ("db", "backup")
    ]
    cells = [
        cell("db", "amd64", Status.READY),
        cell("db", "arm64", Status.READY, emulated=True),
        cell("backup", "amd64", Status.READY),
        cell("backup", "arm64", Status.MISSING, emulated=True, detail="missing: the index publishes amd64 only"),
    ]
    r = report(cells, origins)
    pins = {p.component: (p.verdict, p.pinned_at) for p in plan_pins(r, plan_steps(r))}
    assert pins["db"] == ("drop", components["db"].pinned_at)
    assert pins["backup"] == ("keep", components["backup"].pinned_at)
    md = markdown.render(r)
    assert 'nodeSelector\\["kubernetes.io/arch"\\]' in md or 'nodeSelector["kubernetes.io/arch"]' in md
    saved = tmp_path / "report.json"
    saved.write_text(json_report.render(r))  # validated against the schema by conftest
    data = json.loads(saved.read_text())
    assert {p["component"]: p["pinned_at"] for p in data["migration"]["pins"]}["db"] == list(components["db"].pinned_at)
    plan = ecoready("plan", str(saved))
    assert plan.returncode == 0, plan.stderr
    assert "| db | db | linux/amd64 | drop | ready on arm64 | hand-written-pins.yaml StatefulSet/db:" in plan.stdout
    assert (
        "| backup | backup | linux/amd64 | keep | arm64: blocked | hand-written-pins.yaml CronJob/backup:"
        in plan.stdout
    )


# -- the pins themselves --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "arches", "by"),
    [
        ({"nodeSelector": {"beta.kubernetes.io/arch": "arm64"}}, ("arm64",), ("nodeSelector",)),
        ({"nodeSelector": {"kubernetes.io/arch": "x86_64"}}, ("amd64",), ("nodeSelector",)),
        ({"nodeSelector": {"disktype": "ssd"}}, ("amd64", "arm64"), ()),
        (  # two terms ORed: either arch
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
                                    ]
                                },
                                {
                                    "matchExpressions": [
                                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}
                                    ]
                                },
                            ]
                        }
                    }
                }
            },
            ("amd64", "arm64"),
            ("node affinity",),
        ),
    ],
)
def test_pins_read_as_the_scheduler_reads_them(
    pod: dict[str, object], arches: tuple[str, ...], by: tuple[str, ...]
) -> None:
    pins = read_pins(pod, "spec")
    assert (pins.arches, pins.by) == (arches, by)
    assert pins.platform == (f"linux/{arches[0]}" if len(arches) == 1 and by else "")


# -- hostile input ---------------------------------------------------------------------------


def test_aliases_that_grow_a_huge_tree_cost_bounded_time() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    for n in "bcdefgh":
        prev = chr(ord(n) - 1)
        bomb += f"{n}: &{n} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nx-bomb:\n" + textwrap.indent(bomb, "  ")
    text += textwrap.dedent(
        """\
        spec:
          nodeSelector: *h
          tolerations: *h
          affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: *h}}}
          containers:
            - name: c
              image: x/c:1
              env: *h
              args: *h
              ports: *h
        """
    )
    start = time.monotonic()
    with pytest.raises(ConfigError, match=r"^bomb\.yaml:\d+:\d+: YAML: aliases here expand to more than"):
        parse_kubernetes([("bomb.yaml", text)])
    assert time.monotonic() - start < 5


def test_an_alias_of_a_huge_list_is_read_whole_in_bounded_time() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {x: 1}}\nspec:\n  containers:\n"
    text += (
        "    - name: c\n      image: x/c:1\n      env: &e ["
        + ", ".join(f"{{name: A{i}, value: b}}" for i in range(5000))
        + "]\n"
    )
    text += "    - name: d\n      image: x/d:1\n      env: *e\n"
    start = time.monotonic()
    services, _ = parse_kubernetes([("big.yaml", text)])
    assert [len(s.environment) for s in services] == [5000, 5000]  # every entry, none dropped
    assert time.monotonic() - start < 5


def test_unknown_kinds_and_odd_documents_are_a_line_each() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: acid.zalan.do/v1
        kind: postgresql
        metadata: {name: a}
        ---
        apiVersion: ps.percona.com/v1
        kind: PerconaServerMongoDB
        metadata: {name: b}
        ---
        - just a list
        ---
        apiVersion: other.example.com/v1
        kind: InnoDBCluster
        metadata: {name: not-oracles}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec: {containers: [{name: c, image: x/c:1}, 7, {name: d}]}
        """
    )
    services, notes = parse_kubernetes([("m.yaml", text)])
    assert [s.name for s in services] == ["p-c", "p-d"]
    assert sum("a kind ecoready does not read" in n for n in notes) == 3  # InnoDBCluster of another group too
    assert any("not a Kubernetes object" in n for n in notes)
    assert any("is not a container" in n for n in notes)
    mapped = map_services(services)
    assert [r.id for r in mapped.rows] == ["p-c"]  # no image: left out, said
    assert any("p-d: " in line and "image" in line for line in mapped.undecided)


def test_files_that_cannot_be_read(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"apiVersion: v1\n" + b"#" * MAX_BYTES)
    many = tmp_path / "many.yaml"
    many.write_text("apiVersion: v1\nkind: ConfigMap\n---\n" * (MAX_DOCUMENTS + 1))
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v1\nkind: Pod\nspec: [x\n")
    deep = tmp_path / "deep.yaml"
    deep.write_text("apiVersion: v1\nkind: Pod\nspec: " + "[" * 20000 + "]" * 20000 + "\n")
    secret = DATA / "mysql-operator-sample-secret.yaml"
    cases = (
        (big, "larger than"),
        (many, "more than"),
        (broken, "broken.yaml"),
        (deep, "YAML"),
        (secret, "no workload"),
    )
    for path, words in cases:
        with pytest.raises(ConfigError, match=words):
            read_kubernetes(path)


def test_kubernetes_is_told_from_compose(tmp_path: Path) -> None:
    compose = tmp_path / "docker-compose.yml"
    compose.write_text("services:\n  db:\n    image: mariadb:10.11\n    # kind: Pod\n")
    listed = tmp_path / "list.json"
    listed.write_text('{"apiVersion": "v1", "kind": "List", "items": []}')
    assert not is_kubernetes(compose)
    assert is_kubernetes(HAND) and is_kubernetes(DATA) and is_kubernetes(listed)


def test_kubectl_get_all_reads_a_workload_once_through_its_owner() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: List
        items:
          - apiVersion: apps/v1
            kind: Deployment
            metadata: {name: web}
            spec: {template: {spec: {containers: [{name: web, image: x/web:1}]}}}
          - apiVersion: apps/v1
            kind: ReplicaSet
            metadata: {name: web-5d4f, ownerReferences: [{kind: Deployment, name: web}]}
            spec: {template: {spec: {containers: [{name: web, image: x/web:1}]}}}
          - apiVersion: v1
            kind: Pod
            metadata: {name: web-5d4f-abcde, ownerReferences: [{kind: ReplicaSet, name: web-5d4f}]}
            spec: {containers: [{name: web, image: x/web:1}]}
          - apiVersion: v1
            kind: Pod
            metadata: {name: orphan, ownerReferences: [{kind: ReplicaSet, name: gone}]}
            spec: {containers: [{name: c, image: x/orphan:1}]}
        """
    )
    services, notes = parse_kubernetes([("all.yaml", text)])
    assert [s.name for s in services] == ["web", "orphan"]
    assert "made by another object among the manifests, read once through it: 1 Pod, 1 ReplicaSet" in notes


def test_an_app_naming_an_operators_service_gets_its_cluster_as_backend(tmp_path: Path) -> None:
    folder = tmp_path / "pxc"
    folder.mkdir()
    (folder / "cr.yaml").write_text((DATA / "percona-xtradb-cluster-operator-cr.yaml").read_text())
    (folder / "app.yaml").write_text(
        textwrap.dedent(
            """\
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: shop, namespace: db}
            spec:
              template:
                spec:
                  containers:
                    - name: shop
                      image: ghcr.io/acme/shop:1.4
                      ports: [{containerPort: 8080}]
                      env:
                        - {name: MYSQL_HOST, value: cluster1-haproxy}
                        - {name: DATABASE_URL, value: "jdbc:mysql://cluster1-haproxy:3306/shop"}
            """
        )
    )
    out, _ = init(tmp_path, folder)
    rows = {c.id: c for c in load(out).components}
    assert (rows["shop"].backend, rows["cluster1-haproxy"].backend) == ("cluster1-pxc", "cluster1-pxc")
    assert rows["shop"].options["env"]["MYSQL_HOST"] == "{host}"
    assert rows["shop"].options["env"]["DATABASE_URL"] == "jdbc:mysql://{host}:{port}/shop"


def test_an_empty_image_where_the_operator_has_no_default_is_left_out_and_said() -> None:
    text = (DATA / "percona-xtradb-cluster-operator-cr.yaml").read_text()
    text = text.replace("image: perconalab/percona-xtradb-cluster-operator:main-pxc8.4\n", 'image: ""\n', 1)
    services, notes = parse_kubernetes([("cr.yaml", text)])
    assert "cluster1-pxc" not in [s.name for s in services]
    assert any("`spec.pxc.image` is empty and the operator has no default" in n for n in notes)


def test_operators_scheduling_fields_are_pins_too() -> None:
    """The real CRs with their commented-out scheduling examples switched on, on arch."""
    pxc = (DATA / "percona-xtradb-cluster-operator-cr.yaml").read_text()
    pxc = pxc.replace(
        "#    nodeSelector:\n#      disktype: ssd\n", "    nodeSelector:\n      kubernetes.io/arch: amd64\n", 1
    )
    ps = (DATA / "percona-server-mysql-operator-cr.yaml").read_text()
    advanced = """\
      advanced:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: kubernetes.io/arch, operator: In, values: [arm64]}
"""
    ps = ps.replace("    affinity:\n#      advanced:\n", "    affinity:\n" + advanced + "#      advanced:\n", 1)
    services, _ = parse_kubernetes([("pxc.yaml", pxc), ("ps.yaml", ps)])
    pinned = {s.name: (s.platform, s.pinned_at) for s in services if s.platform}
    assert pinned == {
        "cluster1-pxc": (
            "linux/amd64",
            ('pxc.yaml PerconaXtraDBCluster/cluster1: spec.pxc.nodeSelector["kubernetes.io/arch"]',),
        ),
        "ps-cluster1-mysql": (
            "linux/arm64",
            (
                "ps.yaml PerconaServerMySQL/ps-cluster1: spec.mysql.affinity.advanced.nodeAffinity."
                "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]",
            ),
        ),
    }
