"""The group-replication probe over a fake engine: member settings, the bootstrap and join
sequence (credentials only in script files), the readiness on
performance_schema.replication_group_members, and the smoke checks.

Canned formats:
- `performance_schema.replication_group_members` columns MEMBER_HOST, MEMBER_PORT,
  MEMBER_STATE (ONLINE, RECOVERING, OFFLINE, ERROR, UNREACHABLE), MEMBER_ROLE (PRIMARY,
  SECONDARY), MEMBER_VERSION (MySQL 8.4 Reference Manual, "The
  replication_group_members Table").
- `performance_schema.replication_connection_status.LAST_ERROR_MESSAGE` of the
  `group_replication_recovery` channel, e.g. `error connecting to master
  'gr_recovery@node1:3306' - retry-time: 60 retries: 1 message: Authentication plugin
  'caching_sha2_password' reported error: Authentication requires secure connection.`
  (MySQL manual, "Distributed Recovery": the error a recovery channel without TLS hits).
- a write on a secondary: `ERROR 1290 (HY000): The MySQL server is running with the
  --super-read-only option so it cannot execute this statement`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ecoready.domain.model import Category
from ecoready.probes.group_replication import (
    MEMBERS_QUERY,
    RECOVERY_ERROR_QUERY,
    GroupReplicationProbe,
    group_problem,
    node_args,
)
from tests.support.fake_host import FakeHost, Sql, SqlFailure, component, context, rig

GROUP = component("group-replication", "group-replication", "mysql:8.4", category=Category.HA)
NODES = ("node1", "node2", "node3")


def group(host: FakeHost, *, recovering: str | None = None) -> dict[str, Any]:
    """MySQL 8.4 members: a node joins the group when its script runs START
    GROUP_REPLICATION; node1 is primary while it runs, then node2 takes over."""
    state: dict[str, Any] = {"members": [], "scripts": {}, "rows": 0, "statements": []}

    def running(node: str) -> bool:
        return any(c.role == node and c.running for c in host.containers.values())

    def members() -> list[dict[str, object]]:
        alive = [m for m in state["members"] if running(m)]
        primary = "node1" if "node1" in alive else min(alive, default=None)
        return [
            {
                "MEMBER_HOST": m,
                "MEMBER_PORT": 3306,
                "MEMBER_STATE": "RECOVERING" if m == recovering else "ONLINE",
                "MEMBER_ROLE": "PRIMARY" if m == primary else "SECONDARY",
                "MEMBER_VERSION": "8.4.6",
            }
            for m in alive
        ]

    @host.sql
    def node(call: Sql) -> list[dict[str, object]] | None:
        role = call.via.role
        state["statements"].append((role, call.script or call.statement))
        if call.statement == "SELECT 1 AS ok":
            return [{"ok": 1}]
        if call.statement == "SELECT @@version AS v":
            return [{"v": "8.4.6"}]
        if call.statement == "RESET BINARY LOGS AND GTIDS":
            return []
        if call.script is not None:
            state["scripts"][role] = call.script
            state["members"].append(role)
            return []
        if call.statement == MEMBERS_QUERY:
            return members()
        if call.statement == RECOVERY_ERROR_QUERY:
            return [
                {
                    "error": "error connecting to master 'gr_recovery@node1:3306' - retry-time: 60 retries: 1 "
                    "message: Authentication plugin 'caching_sha2_password' reported error: "
                    "Authentication requires secure connection."
                    if role == recovering
                    else ""
                }
            ]
        if call.statement.startswith("CREATE DATABASE ecoready_gr"):
            assert role == "node1"
            state["rows"] = 2
            return []
        if call.statement == "SELECT COUNT(*) AS n FROM ecoready_gr.t":
            return [{"n": state["rows"]}]
        if call.statement == "SELECT @@super_read_only AS v":
            return [{"v": 1}]
        if call.statement.startswith("INSERT INTO ecoready_gr.t VALUES (99"):
            raise SqlFailure(
                1290,
                "HY000",
                "The MySQL server is running with the --super-read-only option so it cannot execute this statement",
            )
        return None

    return state


async def test_bootstrap_join_and_smoke_sequence() -> None:
    r = rig()
    state = group(r.host)
    probe = GroupReplicationProbe(context(r, GROUP))
    await probe.start()
    await probe.smoke()
    checks = r.checks()
    assert {n: c.outcome.value for n, c in checks.items()} == {
        "members-online": "pass",
        "write-primary-read-secondary": "pass",
        "secondary-read-only": "pass",
        "primary-failover": "pass",
    }
    assert checks["members-online"].detail == "3 members ONLINE, primary node1 (single-primary), MySQL 8.4.6"
    assert (
        checks["primary-failover"].detail
        == "node1 stopped: 2 members ONLINE, primary node2 (single-primary), MySQL 8.4.6"
    )
    assert checks["secondary-read-only"].detail.startswith("a write by root is refused: ")

    # every member: GTIDs, the plugin, one group name, its own XCom address, all seeds
    args = {n: list(r.host.by_role(n).spec.command or ()) for n in NODES}
    names = {a for n in NODES for a in args[n] if a.startswith("--loose-group-replication-group-name=")}
    assert len(names) == 1
    for i, n in enumerate(NODES):
        assert args[n][0] == "mysqld" and f"--server-id={i + 1}" in args[n] and f"--report-host={n}" in args[n]
        assert "--plugin-load-add=group_replication.so" in args[n] and "--gtid-mode=ON" in args[n]
        assert f"--loose-group-replication-local-address={n}:33061" in args[n]
        assert "--loose-group-replication-group-seeds=node1:33061,node2:33061,node3:33061" in args[n]
        assert "--loose-group-replication-start-on-boot=OFF" in args[n]

    # node1 bootstraps, the others only join; each first resets its binary logs
    scripts = state["scripts"]
    assert "SET GLOBAL group_replication_bootstrap_group=ON;\nSTART GROUP_REPLICATION" in scripts["node1"]
    assert scripts["node1"].rstrip().endswith("SET GLOBAL group_replication_bootstrap_group=OFF;")
    for n in ("node2", "node3"):
        assert "bootstrap" not in scripts[n] and "START GROUP_REPLICATION USER='gr_recovery', PASSWORD=" in scripts[n]
    for n in NODES:
        assert scripts[n].startswith(
            "SET SQL_LOG_BIN=0;\nCREATE USER 'gr_recovery'@'%' IDENTIFIED WITH caching_sha2_password"
        )
        assert "GRANT REPLICATION SLAVE, CONNECTION_ADMIN, BACKUP_ADMIN, GROUP_REPLICATION_STREAM" in scripts[n]
        mine = [s for role, s in state["statements"] if role == n]
        assert mine.index("RESET BINARY LOGS AND GTIDS") < mine.index(scripts[n])
    assert [m for m in state["members"]] == list(NODES)  # joined one after the other
    secret = probe.recovery_password.reveal()
    assert all(secret not in " ".join(argv) for _, argv in r.host.execs)


async def test_a_member_stuck_in_recovery_keeps_the_start_waiting_with_the_channel_error() -> None:
    r = rig()
    group(r.host, recovering="node2")
    ctx = context(r, GROUP)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(GroupReplicationProbe(ctx).start(), 2)
    assert "node2 ONLINE in a group of 2" in ctx.waiting_for
    # the recovery channel's reason first (the member list may be cut short in a detail)
    assert "last: recovery: Authentication plugin 'caching_sha2_password' reported error: " in ctx.waiting_for
    assert "; 1 of 2 members ONLINE (node1 ONLINE, node2" in ctx.waiting_for


def test_group_verdicts() -> None:
    def member(host: str, state: str = "ONLINE", role: str = "SECONDARY") -> dict[str, str | None]:
        return {"MEMBER_HOST": host, "MEMBER_STATE": state, "MEMBER_ROLE": role}

    healthy = [member("node1", role="PRIMARY"), member("node2"), member("node3")]
    assert group_problem(healthy, 3, "node1") is None
    assert group_problem(healthy, 3, "node2") == "primary is node1, expected node2"
    assert group_problem([*healthy[:2], member("node3", "ERROR")], 3) == (
        "2 of 3 members ONLINE (node1 ONLINE, node2 ONLINE, node3 ERROR)"
    )
    assert group_problem([member("node1", role="PRIMARY"), member("node2", role="PRIMARY")], 2) == "2 primaries"
    assert group_problem([], 3) == "0 of 3 members ONLINE (no members); 0 primaries"
    args = node_args("node2", 1, "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
    assert "--loose-group-replication-single-primary-mode=ON" in args
    assert "--loose-group-replication-recovery-use-ssl=ON" in args  # caching_sha2_password needs TLS
