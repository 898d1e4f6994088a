"""Galera (MariaDB): three nodes on the cell's private network.

start: node1 bootstraps the cluster, node2 and node3 join; ready when every node reports
`wsrep_local_state_comment = Synced`, `wsrep_cluster_size = 3` and `wsrep_ready = ON`.
smoke: a write on node1 is read on node3; node2 stops and the cluster shrinks to 2, then
node2 comes back, rejoins and the cluster is 3 again.

State transfer uses rsync (no SST credentials on any command line). All nodes share one
root password, because a joiner's data (users included) arrives from the donor.
"""

from __future__ import annotations

import asyncio

from app.sql import SqlError
from probes.base import CheckFailed, Probe, StageFailed
from probes.servers import Server, start_server

NODES = ("node1", "node2", "node3")
CLUSTER = "ecoready"
PROVIDER = "/usr/lib/libgalera_smm.so"  # the official image's path (the lab image links it there)


def node_args(node: str, *, bootstrap: bool, provider: str = PROVIDER) -> list[str]:
    """Server arguments of one node; node1 bootstraps, the others join all three."""
    address = "gcomm://" if bootstrap else "gcomm://" + ",".join(NODES)
    args = [
        "--wsrep-on=ON",
        f"--wsrep-provider={provider}",
        f"--wsrep-cluster-name={CLUSTER}",
        f"--wsrep-cluster-address={address}",
        f"--wsrep-node-name={node}",
        "--wsrep-sst-method=rsync",
        "--binlog-format=ROW",
        "--innodb-autoinc-lock-mode=2",
        "--default-storage-engine=InnoDB",
    ]
    if bootstrap:
        args.append("--wsrep-new-cluster")
    return args


async def wsrep(server: Server) -> dict[str, str]:
    rows = await server.query(
        "SHOW GLOBAL STATUS WHERE Variable_name IN "
        "('wsrep_local_state_comment', 'wsrep_cluster_size', 'wsrep_ready', 'wsrep_cluster_status')"
    )
    return {str(r.get("Variable_name", "")).lower(): str(r.get("Value") or "") for r in rows}


def synced(status: dict[str, str], size: int) -> str | None:
    """None when the node is Synced in a primary cluster of `size`, else what is off."""
    problems = []
    if status.get("wsrep_local_state_comment") != "Synced":
        problems.append(f"state {status.get('wsrep_local_state_comment') or '?'}")
    if status.get("wsrep_cluster_size") != str(size):
        problems.append(f"cluster size {status.get('wsrep_cluster_size') or '?'} (want {size})")
    if status.get("wsrep_ready") != "ON":
        problems.append(f"wsrep_ready {status.get('wsrep_ready') or '?'}")
    return "; ".join(problems) or None


class GaleraProbe(Probe):
    kind = "galera"

    async def start(self) -> None:
        ctx = self.ctx
        root = ctx.secret("root")
        self.nodes: dict[str, Server] = {}
        for i, node in enumerate(NODES):
            self.nodes[node] = await start_server(ctx, node, root=root, args=node_args(node, bootstrap=i == 0))
            await self.until_synced(self.nodes[node], i + 1, what=f"{node} Synced in a cluster of {i + 1}")
        for node in NODES:
            await self.until_synced(self.nodes[node], len(NODES), what=f"{node} Synced in a cluster of 3")
        self.endpoint = self.nodes["node1"].endpoint

    async def until_synced(self, server: Server, size: int, *, what: str) -> None:
        async def attempt() -> None:
            problem = synced(await wsrep(server), size)
            if problem:
                raise StageFailed(problem)

        await self.ctx.wait_ready(server.container, attempt, what=what)

    async def smoke(self) -> None:
        await self.ctx.check("write-node1-read-node3", self._replicated_write)
        await self.ctx.check("node2-leaves", self._node_leaves)
        await self.ctx.check("node2-rejoins", self._node_rejoins)

    async def _replicated_write(self) -> str:
        n1, n3 = self.nodes["node1"], self.nodes["node3"]
        await n1.query(
            "CREATE DATABASE IF NOT EXISTS ecoready_galera; "
            "CREATE TABLE ecoready_galera.t (id INT PRIMARY KEY, v VARCHAR(32)) ENGINE=InnoDB; "
            "INSERT INTO ecoready_galera.t VALUES (1, 'from node1'), (2, 'from node1')"
        )
        rows: list[dict[str, str | None]] = []
        for _ in range(30):  # replication is synchronous, applying on node3 may lag a moment
            try:
                rows = await n3.query("SELECT COUNT(*) AS n FROM ecoready_galera.t WHERE v = 'from node1'")
            except SqlError:
                rows = []
            if rows and rows[0].get("n") == "2":
                return "2 rows written on node1 read on node3"
            await asyncio.sleep(0.5)
        raise CheckFailed(f"node3 sees {rows[0].get('n') if rows else 'no table'} of the 2 rows written on node1")

    async def _node_leaves(self) -> str:
        await self.ctx.stop(self.nodes["node2"].container, timeout=20)
        return await self._wait_size(self.nodes["node1"], 2)

    async def _node_rejoins(self) -> str:
        node2 = self.nodes["node2"]
        await self.ctx.restart(node2.container)
        await node2.wait_ready()
        await self.until_synced(node2, 3, what="node2 Synced again after restart")
        return await self._wait_size(self.nodes["node1"], 3)

    async def _wait_size(self, server: Server, size: int) -> str:
        status: dict[str, str] = {}
        for _ in range(int(self.ctx.scaled(60))):
            status = await wsrep(server)
            if status.get("wsrep_cluster_size") == str(size) and status.get("wsrep_cluster_status") == "Primary":
                return f"cluster size {size} ({server.alias} is Primary)"
            await asyncio.sleep(1)
        raise CheckFailed(f"cluster size stayed {status.get('wsrep_cluster_size')}, expected {size}")


PROBE = GaleraProbe
