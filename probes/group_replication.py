"""MySQL group replication: three MySQL 8.4 nodes in one single-primary group.

Settings (MySQL 8.4 manual, "Configuring an Instance for Group Replication"): GTIDs on,
the plugin loaded at start-up, a group name (a UUID per run), each member's XCom address
`nodeN:33061` with all three as seeds, `report_host` = the node's alias so members reach
each other by the names the cell network resolves, and `group_replication_start_on_boot=OFF`
(the probe starts the group itself). The recovery channel connects with TLS, because its
user authenticates with caching_sha2_password.

start: binary logs and GTIDs reset on every node (the image's initialisation leaves local
transactions that would keep a node out of the group); the recovery user created on each
node with binary logging off; node1 bootstraps the group (`group_replication_bootstrap_group`
ON around `START GROUP_REPLICATION`), node2 and node3 join one after the other; the
credentials are given to `START GROUP_REPLICATION USER=..., PASSWORD=...` from a script
file, never an argv. Ready when `performance_schema.replication_group_members` lists the
three ONLINE with node1 the only PRIMARY.
smoke: members as seen from a secondary, a write on the primary read on a secondary, the
secondaries refuse writes (super_read_only), and when the primary stops the two others
elect a new one.
"""

from __future__ import annotations

import asyncio
import time
import uuid

from ecoready.probe_api import CheckFailed, Probe, Row, StageFailed, together
from ecoready.probes.shared.accounts import sql_string
from ecoready.probes.shared.cluster import reset_binary_logs, run_secret_script, wait_for_count, write_refused
from ecoready.probes.shared.sql_server import PORT, Server, start_server

NODES = ("node1", "node2", "node3")
XCOM_PORT = 33061
RECOVERY_USER = "gr_recovery"
DATABASE = "ecoready_gr"
MEMBERS_QUERY = (
    "SELECT MEMBER_HOST, MEMBER_PORT, MEMBER_STATE, MEMBER_ROLE, MEMBER_VERSION "
    "FROM performance_schema.replication_group_members ORDER BY MEMBER_HOST"
)
RECOVERY_ERROR_QUERY = (
    "SELECT LAST_ERROR_MESSAGE AS error FROM performance_schema.replication_connection_status "
    "WHERE CHANNEL_NAME = 'group_replication_recovery'"
)


def node_args(node: str, index: int, group: str) -> list[str]:
    """Server arguments of one member. The plugin's own options carry `loose-`: the image's
    entrypoint first checks the arguments with `mysqld --verbose --help`, and its
    initialisation server runs with them too; `loose-` keeps an option the plugin does not
    define yet from stopping either (the plugin applies it once loaded)."""
    seeds = ",".join(f"{n}:{XCOM_PORT}" for n in NODES)
    plugin = {
        "group-name": group,
        "start-on-boot": "OFF",
        "local-address": f"{node}:{XCOM_PORT}",
        "group-seeds": seeds,
        "single-primary-mode": "ON",
        "recovery-use-ssl": "ON",
    }
    return [
        f"--server-id={index + 1}",
        "--gtid-mode=ON",
        "--enforce-gtid-consistency=ON",
        f"--report-host={node}",
        "--plugin-load-add=group_replication.so",
        *(f"--loose-group-replication-{name}={value}" for name, value in plugin.items()),
    ]


def recovery_user(password: str) -> list[str]:
    """The distributed-recovery account, created on each node without binary logging."""
    who = f"'{RECOVERY_USER}'@'%'"
    return [
        "SET SQL_LOG_BIN=0",
        f"CREATE USER {who} IDENTIFIED WITH caching_sha2_password BY {sql_string(password)}",
        f"GRANT REPLICATION SLAVE, CONNECTION_ADMIN, BACKUP_ADMIN, GROUP_REPLICATION_STREAM ON *.* TO {who}",
        "SET SQL_LOG_BIN=1",
    ]


def start_group(password: str, *, bootstrap: bool) -> list[str]:
    start = f"START GROUP_REPLICATION USER='{RECOVERY_USER}', PASSWORD={sql_string(password)}"
    if bootstrap:
        return [
            "SET GLOBAL group_replication_bootstrap_group=ON",
            start,
            "SET GLOBAL group_replication_bootstrap_group=OFF",
        ]
    return [start]


def group_problem(rows: list[Row], want: int, primary: str | None = None) -> str | None:
    """None when `want` members are ONLINE with one PRIMARY (`primary` when given), else what is off."""
    online = [r for r in rows if r.get("MEMBER_STATE") == "ONLINE"]
    primaries = [r.get("MEMBER_HOST") for r in online if r.get("MEMBER_ROLE") == "PRIMARY"]
    problems = []
    if len(online) != want:
        states = ", ".join(f"{r.get('MEMBER_HOST')} {r.get('MEMBER_STATE')}" for r in rows) or "no members"
        problems.append(f"{len(online)} of {want} members ONLINE ({states})")
    if len(primaries) != 1:
        problems.append(f"{len(primaries)} primaries")
    elif primary is not None and primaries[0] != primary:
        problems.append(f"primary is {primaries[0]}, expected {primary}")
    return "; ".join(problems) or None


def describe_group(rows: list[Row]) -> str:
    online = [r for r in rows if r.get("MEMBER_STATE") == "ONLINE"]
    primary = next((r.get("MEMBER_HOST") for r in online if r.get("MEMBER_ROLE") == "PRIMARY"), "?")
    version = next((r.get("MEMBER_VERSION") for r in online if r.get("MEMBER_VERSION")), "?")
    return f"{len(online)} members ONLINE, primary {primary} (single-primary), MySQL {version}"


class GroupReplicationProbe(Probe):
    kind = "group-replication"

    async def start(self) -> None:
        ctx = self.ctx
        self.group = str(uuid.uuid4())
        root = ctx.secret("root")
        self.recovery_password = ctx.secret("gr-recovery")
        # the three servers initialise at once (a third of the wait, natively); they join
        # the group one after another below
        servers = await together(
            *(start_server(ctx, node, root=root, args=node_args(node, i, self.group)) for i, node in enumerate(NODES))
        )
        self.nodes: dict[str, Server] = dict(zip(NODES, servers, strict=True))
        version = await self.nodes["node1"].version()
        password = self.recovery_password.reveal()
        for i, (node, server) in enumerate(self.nodes.items()):
            await server.query(reset_binary_logs(server.flavor, version))
            await run_secret_script(
                server, "group-replication", [*recovery_user(password), *start_group(password, bootstrap=i == 0)]
            )
            await self.until_group(server, i + 1, what=f"{node} ONLINE in a group of {i + 1}")
        await self.until_group(self.nodes["node1"], len(NODES), what="3 members ONLINE, node1 primary", primary="node1")
        self.endpoint = self.nodes["node1"].endpoint

    async def members(self, server: Server) -> list[Row]:
        return await server.query(MEMBERS_QUERY)

    async def until_group(self, server: Server, want: int, *, what: str, primary: str | None = None) -> None:
        async def attempt() -> None:
            problem = group_problem(await self.members(server), want, primary)
            if problem:
                errors = await server.query(RECOVERY_ERROR_QUERY)
                last = (errors[0].get("error") or "") if errors else ""
                # "error connecting to master '...' - retry-time: 60 retries: 1 message: <why>"
                why = last.split(" message: ", 1)[-1]
                raise StageFailed(f"recovery: {why}; {problem}" if why else problem)

        await self.ctx.wait_ready(server.container, attempt, what=what, port=PORT)

    async def smoke(self) -> None:
        await self.ctx.check("members-online", self._members)
        await self.ctx.check("write-primary-read-secondary", self._replicated_write)
        await self.ctx.check("secondary-read-only", self._read_only)
        await self.ctx.check("primary-failover", self._failover)

    async def _members(self) -> str:
        rows = await self.members(self.nodes["node3"])
        problem = group_problem(rows, len(NODES), "node1")
        if problem:
            raise CheckFailed(problem)
        return describe_group(rows)

    async def _replicated_write(self) -> str:
        await self.nodes["node1"].query(
            f"CREATE DATABASE {DATABASE}; "
            f"CREATE TABLE {DATABASE}.t (id INT PRIMARY KEY, v VARCHAR(32)) ENGINE=InnoDB; "
            f"INSERT INTO {DATABASE}.t VALUES (1, 'from the primary'), (2, 'from the primary')"
        )
        seen = await wait_for_count(self.nodes["node3"], f"SELECT COUNT(*) AS n FROM {DATABASE}.t", 2)
        if seen is not None:
            raise CheckFailed(f"node3 sees {seen} of the 2 rows written on the primary")
        return "2 rows written on node1 (primary) read on node3"

    async def _read_only(self) -> str:
        secondary = self.nodes["node2"]
        if await secondary.value("@@super_read_only") != "1":
            raise CheckFailed("@@super_read_only is not 1 on the secondary node2")
        return await write_refused(secondary, f"INSERT INTO {DATABASE}.t VALUES (99, 'must fail')")

    async def _failover(self) -> str:
        await self.ctx.stop(self.nodes["node1"].container, timeout=20)
        survivor = self.nodes["node2"]
        deadline = time.monotonic() + self.ctx.scaled(60)
        while True:
            rows = await self.members(survivor)
            problem = group_problem(rows, 2)
            if problem is None:
                return "node1 stopped: " + describe_group(rows)
            if time.monotonic() >= deadline:
                raise CheckFailed(f"no new primary after node1 stopped: {problem}")
            await asyncio.sleep(1)


PROBE = GroupReplicationProbe
