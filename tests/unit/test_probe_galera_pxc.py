"""The Galera start/wait/check code shared by galera (MariaDB) and pxc (Percona XtraDB
Cluster), over a fake engine: each node's contract, the state-transfer settings, the
certificates PXC shares, and the readiness and smoke sequence.

Canned formats:
- `SHOW GLOBAL STATUS` rows (`Variable_name`, `Value`) with the values pxc-docs `docker.md`
  shows for a healthy 3-node cluster: wsrep_local_state_comment `Synced`,
  wsrep_cluster_size `3`, wsrep_cluster_status `Primary`, wsrep_ready `ON`; a joiner
  reports `Joining: receiving State Transfer` (Galera's state names, MariaDB KB
  "wsrep_local_state_comment").
- `wsrep_provider_options` as `key = value; key = value` (Galera documentation, "Galera
  Parameters"), with socket.ssl_* set from `[mysqld]` ssl-* when
  pxc_encrypt_cluster_traffic is ON (pxc-docs `encrypt-traffic.md`).
- `openssl verify -CAfile ca.pem server-cert.pem` prints `server-cert.pem: OK`
  (pxc-docs `encrypt-traffic.md`, "Verify certificates").
"""

from __future__ import annotations

from typing import Any

import pytest

from ecoready.domain.errors import CheckFailed, StageFailed
from ecoready.domain.model import Category
from ecoready.probes.galera import SST_CONFIG, GaleraProbe
from ecoready.probes.pxc import (
    CERT_DIR,
    CONFIG_PATH,
    ENCRYPTION_QUERY,
    PxcProbe,
    cert_script,
    describe_encryption,
    node_config,
    provider_options,
)
from ecoready.probes.shared.sql_server import ROOT_SECRET_PATH
from ecoready.probes.shared.wsrep import WSREP_STATUS
from tests.support.fake_host import FakeHost, Sql, component, context, failed, ok, rig

GALERA = component("galera-mariadb", "galera", "mariadb:11.8", category=Category.HA)
PXC = component("pxc-8.4", "pxc", "percona/percona-xtradb-cluster:8.4", category=Category.HA)
NODES = ("node1", "node2", "node3")
PROVIDER = (
    "base_dir = /var/lib/mysql/; base_host = 172.18.0.2; base_port = 4567; evs.keepalive_period = PT1S; "
    "gcache.size = 128M; socket.ssl = YES; socket.ssl_ca = /cert/ca.pem; "
    "socket.ssl_cert = /cert/server-cert.pem; socket.ssl_key = /cert/server-key.pem"
)


def cluster(host: FakeHost) -> dict[str, Any]:
    """Answers every node like a Galera node: Synced in a cluster as big as the number of
    nodes running; node3 sees what node1 wrote."""
    state: dict[str, Any] = {"written": 0, "joining_polls": 1}

    def size() -> int:
        return sum(1 for c in host.containers.values() if c.role in NODES and c.running)

    @host.sql
    def node(call: Sql) -> list[dict[str, object]] | None:
        if call.via.role not in NODES:
            return None
        if call.statement == "SELECT 1 AS ok":
            return [{"ok": 1}]
        if call.statement == WSREP_STATUS:
            comment = "Synced"
            if call.via.role == "node2" and state["joining_polls"] > 0:  # one poll mid-SST
                state["joining_polls"] -= 1
                comment = "Joining: receiving State Transfer"
            return [
                {"Variable_name": "wsrep_cluster_size", "Value": size()},
                {"Variable_name": "wsrep_cluster_status", "Value": "Primary"},
                {"Variable_name": "wsrep_local_state_comment", "Value": comment},
                {"Variable_name": "wsrep_ready", "Value": "ON"},
            ]
        if call.statement.startswith("CREATE DATABASE IF NOT EXISTS ecoready_galera"):
            state["written"] = 2
            return []
        if call.statement.startswith("SELECT COUNT(*) AS n FROM ecoready_galera.t"):
            assert call.via.role == "node3"
            return [{"n": state["written"]}]
        if call.statement == ENCRYPTION_QUERY:
            return [
                {"encrypt": 1, "ca": f"{CERT_DIR}/ca.pem", "cert": f"{CERT_DIR}/server-cert.pem", "provider": PROVIDER}
            ]
        return None

    return state


async def test_mariadb_galera_nodes_use_mariabackup_sst_with_credentials_in_a_file() -> None:
    r = rig()
    cluster(r.host)
    probe = GaleraProbe(context(r, GALERA))
    await probe.start()
    await probe.smoke()
    assert {n: c.outcome.value for n, c in r.checks().items()} == {
        "write-node1-read-node3": "pass",
        "node2-leaves": "pass",
        "node2-rejoins": "pass",
    }
    root = probe.nodes["node1"].root.reveal()
    for i, node in enumerate(NODES):
        c = r.host.by_role(node)
        args = list(c.spec.command or ())
        assert args[0] == "mariadbd" and "--wsrep-sst-method=mariabackup" in args
        assert "--wsrep-provider=/usr/lib/libgalera_smm.so" in args
        assert ("--wsrep-new-cluster" in args) is (i == 0)
        # the SST credentials: a config file the server reads, not an argument or a variable
        assert c.files[SST_CONFIG].decode() == f'[mariadb]\nwsrep_sst_auth="root:{root}"\n'
        assert c.files[ROOT_SECRET_PATH].decode() == root  # one root password: data comes by SST
        assert c.spec.env["MARIADB_ROOT_PASSWORD_FILE"] == ROOT_SECRET_PATH
        assert all(root not in v for v in c.spec.env.values())
    assert all(root not in " ".join(argv) for _, argv in r.host.execs)
    assert r.host.by_role("node2").running  # it left and came back


async def test_pxc_shares_one_set_of_certificates_and_follows_the_image_contract() -> None:
    r = rig()
    cluster(r.host)

    @r.host.execs_to
    def certs(container: Any, argv: list[str]) -> Any:
        if container.role == "certs" and argv == ["bash", "-c", cert_script()]:
            return ok("server-cert.pem: OK\n")
        return None

    ctx = context(r, PXC)
    probe = PxcProbe(ctx)
    await probe.start()
    await probe.smoke()
    assert {n: c.outcome.value for n, c in r.checks().items()} == {
        "cluster-traffic-encrypted": "pass",
        "write-node1-read-node3": "pass",
        "node2-leaves": "pass",
        "node2-rejoins": "pass",
    }
    assert r.checks()["cluster-traffic-encrypted"].detail == (
        "all 3 nodes: pxc_encrypt_cluster_traffic=ON, shared CA /cert/ca.pem, Galera socket.ssl=YES"
    )

    # certificates: made once, as root, by a throw-away container of the PXC image, removed
    # before node1 starts; every node mounts the same volume at /cert
    roles = [c.role for c in r.host.started]
    assert roles == ["certs", "node1", "node2", "node3"]
    maker = r.host.started[0]
    assert maker.spec.entrypoint == ("sleep", "infinity") and maker.id in r.host.removed
    assert ("certs", ["bash", "-c", cert_script()], "root") in r.host.exec_users
    (volume,) = maker.spec.volumes
    assert all(r.host.by_role(n).spec.volumes == {volume: CERT_DIR} for n in NODES)
    assert ctx.main is not None and ctx.main.role == "node1"  # the report shows a node's log

    # the entrypoint's contract: node1 bootstraps, the others join it by name
    envs = {n: r.host.by_role(n).spec.env for n in NODES}
    assert all(env["CLUSTER_NAME"] == "ecoready" for env in envs.values())
    assert "CLUSTER_JOIN" not in envs["node1"]
    assert envs["node2"]["CLUSTER_JOIN"] == envs["node3"]["CLUSTER_JOIN"] == "node1"
    assert envs["node1"]["MYSQL_ROOT_PASSWORD_FILE"] == ROOT_SECRET_PATH and envs["node1"]["MYSQL_ROOT_HOST"] == "%"
    assert envs["node1"]["PERCONA_TELEMETRY_DISABLE"] == "1"
    for name in ("XTRABACKUP_PASSWORD", "CLUSTERCHECK_PASSWORD", "MONITOR_PASSWORD"):
        path = envs["node1"][f"{name}_FILE"]
        assert r.host.by_role("node1").files[path] and name not in envs["node1"]
    node1 = r.host.by_role("node1")
    assert node1.spec.command is None  # the image's own CMD (mysqld)
    assert node1.files[CONFIG_PATH] == node_config()
    config = node_config().decode()
    assert "[mysqld]\npxc_encrypt_cluster_traffic=ON\nssl-ca=/cert/ca.pem\n" in config
    assert (
        "[sst]\nencrypt=4\nssl-ca=/cert/ca.pem\nssl-cert=/cert/server-cert.pem\nssl-key=/cert/server-key.pem\n"
        in config
    )


async def test_pxc_without_certificates_does_not_start() -> None:
    r = rig()
    r.host.execs_to(lambda c, argv: failed(1, "Can't open ca-key.pem for writing, Permission denied\n"))
    with pytest.raises(StageFailed, match=r"could not make the cluster certificates.*Permission denied"):
        await PxcProbe(context(r, PXC)).start()


def test_cert_script_makes_distinct_names_and_hands_the_keys_to_mysql() -> None:
    assert "/CN=ecoready-pxc-ca" in cert_script() and "/CN=ecoready-pxc-node" in cert_script()
    assert "openssl verify -CAfile ca.pem server-cert.pem" in cert_script()
    assert "chown -R mysql:mysql /cert" in cert_script() and "rm -f ca-key.pem" in cert_script()


def test_encryption_verdicts() -> None:
    good: dict[str, str | None] = {
        "encrypt": "1",
        "ca": "/cert/ca.pem",
        "cert": "/cert/server-cert.pem",
        "provider": PROVIDER,
    }
    assert provider_options(PROVIDER)["socket.ssl_cert"] == "/cert/server-cert.pem"
    assert describe_encryption(good).startswith("pxc_encrypt_cluster_traffic=ON")
    with pytest.raises(CheckFailed, match="expected ON"):
        describe_encryption({**good, "encrypt": "0"})
    with pytest.raises(CheckFailed, match="shared certificates"):
        describe_encryption({**good, "cert": "server-cert.pem"})  # the auto-generated ones in the datadir


async def test_a_joiner_that_never_syncs_keeps_the_start_waiting_and_says_why() -> None:
    import asyncio

    r = rig()

    @r.host.sql
    def stuck(call: Sql) -> list[dict[str, object]] | None:
        if call.statement == "SELECT 1 AS ok":
            return [{"ok": 1}]
        joining = call.via.role == "node2"
        return [
            {"Variable_name": "wsrep_cluster_size", "Value": 2 if joining else 1},
            {"Variable_name": "wsrep_local_state_comment", "Value": "Joiner" if joining else "Synced"},
            {"Variable_name": "wsrep_ready", "Value": "OFF" if joining else "ON"},
        ]

    ctx = context(r, GALERA)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(GaleraProbe(ctx).start(), 2)
    assert "node2 Synced in a cluster of 2" in ctx.waiting_for
    assert "state Joiner; wsrep_ready OFF" in ctx.waiting_for
