"""What init reads from Kubernetes manifests, on the edges: whether a container stays up or
runs to completion is where it runs (not its ports), owners are matched with their
namespace and an owner cycle drops nothing, a Secret's password reaches the app as
`*_FILE` as it does from a compose file. In-process. (Large pods and lists:
test_kube_scale.py.)"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ecoready.domain.errors import ConfigError
from ecoready.stack.compose import parse_compose
from ecoready.stack.kube import parse_kubernetes, read_kubernetes
from ecoready.stack.mapping import Mapped, map_services


def mapped(text: str) -> tuple[Mapped, list[str]]:
    services, notes = parse_kubernetes([("m.yaml", textwrap.dedent(text))])
    result = map_services(services)
    return result, [*notes, *result.undecided]


def modes(result: Mapped) -> dict[str, str]:
    return {r.id: r.options.get("mode", r.probe) for r in result.rows}


def test_where_a_container_runs_decides_daemon_or_job_not_its_ports() -> None:
    result, lines = mapped(
        """\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: exporter}
        spec: {template: {spec: {containers: [{name: e, image: prom/mysqld-exporter:v0.15.1}]}}}
        ---
        apiVersion: batch/v1
        kind: Job
        metadata: {name: migrate}
        spec:
          template:
            spec: {restartPolicy: Never, containers: [{name: m, image: shop/migrate:1, ports: [{containerPort: 80}]}]}
        ---
        apiVersion: batch/v1
        kind: CronJob
        metadata: {name: dump}
        spec: {jobTemplate: {spec: {template: {spec: {containers: [{name: d, image: shop/dump:1}]}}}}}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: once}
        spec: {restartPolicy: OnFailure, containers: [{name: o, image: shop/once:1}]}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: kept}
        spec:
          initContainers:
          - {name: setup, image: shop/setup:1}
          - {name: proxy, image: shop/proxy:1, restartPolicy: Always}
          containers: [{name: app, image: shop/app:1}]
        """
    )
    assert modes(result) == {
        "exporter": "service",  # no port: a daemon all the same
        "migrate": "run",  # a port: a Job's container runs to completion all the same
        "dump": "run",
        "once": "run",
        "kept": "service",
        "kept-setup": "run",
        "kept-proxy": "service",  # an init container Kubernetes keeps running: a sidecar
    }
    assert not any('set mode = "service"' in line for line in lines)  # where it runs is known
    why = {r.id: r.why for r in result.rows}
    assert "a container of Deployment/exporter: Kubernetes keeps it running: a daemon" in why["exporter"]
    assert "an init container of Pod/kept: it runs to completion" in why["kept-setup"]


def test_an_init_container_of_a_server_image_is_no_second_server() -> None:
    result, lines = mapped(
        """\
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: db}
        spec:
          template:
            spec:
              initContainers:
              - {name: conf, image: "mysql:8.4", command: [sh, -c, "cp a b"]}
              - {name: seed, image: "mariadb:11.4", command: [sh, -c, "true"]}
              containers:
              - {name: mysql, image: "mysql:8.4"}
              - {name: backup, image: "percona/percona-xtrabackup:8.4"}
        """
    )
    rows = {r.id: (r.probe, r.backend, r.options.get("mode")) for r in result.rows}
    assert rows == {
        "db-mysql": ("server", "", None),
        "db-backup": ("xtrabackup", "db-mysql", None),  # wired to the pod's server
        "db-seed": ("command", "db-mysql", "run"),  # a server's image running a script: a job
    }
    assert any("(conf) runs mysql:8.4, the image of db-mysql" in line for line in lines)
    (seed,) = [r for r in result.rows if r.id == "db-seed"]
    assert seed.why[0] == (
        "db-seed: mariadb:11.4 is MariaDB server, run here with its own command: generic probe, mode run "
        "(passes when its command exits 0)"
    )


def _owned(kind: str, name: str, ns: str, owner_kind: str, owner: str) -> str:
    return textwrap.dedent(
        f"""\
        apiVersion: apps/v1
        kind: {kind}
        metadata:
          name: {name}
          namespace: {ns}
          ownerReferences: [{{kind: {owner_kind}, name: {owner}}}]
        spec: {{template: {{spec: {{containers: [{{name: c, image: "shop/{name}:1"}}]}}}}}}
        """
    )


def test_owners_are_matched_with_their_namespace() -> None:
    deployment = _owned("Deployment", "web", "a", "Nothing", "x")
    text = "---\n".join(
        (
            deployment,
            _owned("ReplicaSet", "web-1", "a", "Deployment", "web"),
            _owned("ReplicaSet", "web-2", "b", "Deployment", "web"),
        )
    )
    services, notes = parse_kubernetes([("m.yaml", text)])
    assert [s.image for s in services] == ["shop/web:1", "shop/web-2:1"]  # web-2's owner is not in namespace b
    assert "made by another object among the manifests, read once through it: 1 ReplicaSet" in notes


def test_a_self_owner_or_an_owner_cycle_drops_no_workload() -> None:
    text = "---\n".join(
        (
            _owned("Deployment", "self", "a", "Deployment", "self"),
            _owned("ReplicaSet", "r1", "a", "ReplicaSet", "r2"),
            _owned("ReplicaSet", "r2", "a", "ReplicaSet", "r1"),
            _owned("ReplicaSet", "r3", "a", "ReplicaSet", "r1"),  # hangs off the cycle
        )
    )
    services, notes = parse_kubernetes([("m.yaml", text)])
    assert [s.image for s in services] == ["shop/self:1", "shop/r1:1"]  # the cycle read once, through its first
    assert "made by another object among the manifests, read once through it: 2 ReplicaSet" in notes


def test_a_secret_password_is_wired_as_a_file_as_from_compose() -> None:
    kube, _ = mapped(
        """\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: db}
        spec: {template: {spec: {containers: [{name: m, image: "mysql:8.4"}]}}}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: wp}
        spec:
          template:
            spec:
              containers:
              - name: wp
                image: wordpress:6.8
                env:
                - {name: WORDPRESS_DB_HOST, value: db}
                - {name: WORDPRESS_DB_PASSWORD, valueFrom: {secretKeyRef: {name: s, key: p}}}
                - {name: SHOP_DB_PASSWORD, valueFrom: {secretKeyRef: {name: s, key: p}}}
        """
    )
    _project, services = parse_compose(
        textwrap.dedent(
            """\
            services:
              db: {image: "mysql:8.4"}
              wp:
                image: wordpress:6.8
                environment: {WORDPRESS_DB_HOST: db, WORDPRESS_DB_PASSWORD: s3cret}
            """
        )
    )
    compose = map_services(services)
    (kube_wp,) = [r for r in kube.rows if r.id == "wp"]
    (compose_wp,) = [r for r in compose.rows if r.id == "wp"]
    assert (
        kube_wp.options["env"]
        == compose_wp.options["env"]
        == {
            "WORDPRESS_DB_HOST": "{host}",
            "WORDPRESS_DB_PASSWORD_FILE": "{password_file}",
        }
    )
    assert any(
        "`SHOP_DB_PASSWORD` comes from a Secret" in line and "SHOP_DB_PASSWORD_FILE" in line for line in kube.undecided
    )


def test_manifests_of_kinds_not_read_name_them_in_the_refusal(tmp_path: Path) -> None:
    source = tmp_path / "cluster.yaml"
    source.write_text("apiVersion: example.com/v1\nkind: DatabaseCluster\nmetadata: {name: main}\n")
    with pytest.raises(ConfigError) as error:
        read_kubernetes(source)
    message = str(error.value)
    assert message.startswith(f"{source}:1:1: no workload")
    assert "DatabaseCluster/main (example.com/v1): a kind ecoready does not read" in message


def test_parts_an_operator_provisions_from_a_field_are_rows_or_said() -> None:
    result, lines = mapped(
        """\
        apiVersion: planetscale.com/v2
        kind: VitessCluster
        metadata: {name: v}
        spec: {vtadmin: {}, images: {vtadmin: "vitess/vtadmin:v21.0.0"}, globalLockserver: {external: {address: x}}}
        ---
        apiVersion: moco.cybozu.com/v1beta2
        kind: MySQLCluster
        metadata: {name: m}
        spec:
          collectors: []
          disableSlowQueryLogContainer: true
          podTemplate: {spec: {containers: [{name: mysqld, image: "mysql:8.4.3"}, {name: tail, image: "busybox:1.36"}]}}
        """
    )
    rows = {r.id: (r.image, r.backend) for r in result.rows}
    assert rows["v-vtadmin"] == ("vitess/vtadmin:v21.0.0", "")  # an empty `vtadmin:` section turns it on
    assert "v-etcd" not in rows and any("`spec.globalLockserver.external` is set: etcd" in n for n in lines)
    assert rows["m"] == ("mysql:8.4.3", "")
    assert rows["m-tail"] == ("busybox:1.36", "")  # the user's own container in MOCO's pod
    assert "m-slow-log" not in rows and "m-mysqld-exporter" not in rows
    assert any("`spec.collectors` is off: mysqld-exporter (ghcr.io/cybozu-go/moco/mysqld_exporter" in n for n in lines)


def test_pods_of_one_owner_not_among_the_manifests_are_read_once() -> None:
    """`kubectl get pods -o yaml` of a StatefulSet's three pods: one server, not three."""
    pods: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"mysql-{i}",
                "namespace": "shop",
                "ownerReferences": [{"kind": "StatefulSet", "name": "mysql", "controller": True}],
            },
            "spec": {"containers": [{"name": "mysql", "image": "mysql:8.4"}]},
        }
        for i in range(3)
    ]
    other = json.loads(json.dumps(pods[0]))
    other["metadata"]["namespace"] = "test"  # another namespace's: read as well
    listed = {"apiVersion": "v1", "kind": "List", "items": [*pods, other]}
    services, notes = parse_kubernetes([("pods.json", json.dumps(listed))])
    assert [s.name for s in services] == ["mysql-0", "mysql-0"]
    assert "Pod of StatefulSet/mysql: 2 more alike, made by one owner not among the manifests: read once" in notes
