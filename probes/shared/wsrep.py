"""What every Galera-based probe shares (MariaDB Galera in probes/galera.py, Percona
XtraDB Cluster in probes/pxc.py): three nodes brought up one after the other, the
Synced/size/ready waits, and the smoke checks. Each kind says only how one node starts.

start: node1 bootstraps the cluster, node2 and node3 join; ready when every node reports
`wsrep_local_state_comment = Synced`, `wsrep_cluster_size = 3` and `wsrep_ready = ON`.
smoke: a write on node1 is read on node3; node2 stops and the cluster shrinks to 2, then
node2 comes back, rejoins and the cluster is 3 again.
"""

from __future__ import annotations

import asyncio

from ecoready.probe_api import CheckFailed, Probe, Secret, StageFailed
from ecoready.probes.shared.cluster import wait_for_count
from ecoready.probes.shared.sql_server import PORT, Server

NODES = ("node1", "node2", "node3")
WSREP_STATUS = (
    "SHOW GLOBAL STATUS WHERE Variable_name IN "
    "('wsrep_local_state_comment', 'wsrep_cluster_size', 'wsrep_ready', 'wsrep_cluster_status')"
)
DATABASE = "ecoready_galera"


async def wsrep(server: Server) -> dict[str, str]:
    rows = await server.query(WSREP_STATUS)
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


class WsrepCluster(Probe):
    """Three Galera nodes: the start order, the waits and the smoke checks."""

    async def prepare(self, root: Secret) -> None:
        """Anything the nodes share that must exist before node1 starts."""

    async def start_node(self, node: str, index: int, root: Secret) -> Server:
        raise NotImplementedError

    async def start(self) -> None:
        root = self.ctx.secret("root")
        await self.prepare(root)
        self.nodes: dict[str, Server] = {}
        for i, node in enumerate(NODES):
            self.nodes[node] = await self.start_node(node, i, root)
            await self.until_synced(self.nodes[node], i + 1, what=f"{node} Synced in a cluster of {i + 1}")
        for node in NODES:
            await self.until_synced(self.nodes[node], len(NODES), what=f"{node} Synced in a cluster of 3")
        self.endpoint = self.nodes["node1"].endpoint

    async def until_synced(self, server: Server, size: int, *, what: str) -> None:
        async def attempt() -> None:
            problem = synced(await wsrep(server), size)
            if problem:
                raise StageFailed(problem)

        await self.ctx.wait_ready(server.container, attempt, what=what, port=PORT)

    async def smoke(self) -> None:
        await self.ctx.check("write-node1-read-node3", self._replicated_write)
        await self.ctx.check("node2-leaves", self._node_leaves)
        await self.ctx.check("node2-rejoins", self._node_rejoins)

    async def _replicated_write(self) -> str:
        n1, n3 = self.nodes["node1"], self.nodes["node3"]
        await n1.query(
            f"CREATE DATABASE IF NOT EXISTS {DATABASE}; "
            f"CREATE TABLE {DATABASE}.t (id INT PRIMARY KEY, v VARCHAR(32)) ENGINE=InnoDB; "
            f"INSERT INTO {DATABASE}.t VALUES (1, 'from node1'), (2, 'from node1')"
        )
        # replication is synchronous, but applying on node3 may lag a moment
        seen = await wait_for_count(n3, f"SELECT COUNT(*) AS n FROM {DATABASE}.t WHERE v = 'from node1'", 2)
        if seen is not None:
            raise CheckFailed(f"node3 sees {seen} of the 2 rows written on node1")
        return "2 rows written on node1 read on node3"

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
