"""Readiness waits look in /proc for a listener on the port before they run a client: no
listener, no exec. The /proc readers on canned files (the kernel's `net/tcp` format,
net/ipv4/tcp_ipv4.c get_tcp4_sock: `sl local_address rem_address st ...`, hex ip:port,
state 0A = LISTEN; `net/sockstat`, net/ipv4/proc.c sockstat_seq_show), the wait on a fake
engine with the looks scripted."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from ecoready.engine import procnet
from ecoready.engine.procnet import listening, tcp_counts
from ecoready.probe_api import context as probe_context
from ecoready.probe_api.context import ProbeContext
from ecoready.probes.server import ServerProbe
from tests.support.fake_host import Rig, Sql, SqlFailure, component, context, rig

CID = "4f" * 32
HEADER = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
DNS_LISTENER = "   0: 0B00007F:A1B3 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1\n"
MARIADB_V4 = "   1: 00000000:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000   101        0 2 1\n"
CLIENT_TO_3306 = "   2: 0100007F:9C40 0100007F:0CEA 01 00000000:00000000 00:00000000 00000000     0        0 3 1\n"
MYSQL_V6 = (
    "   0: 00000000000000000000000000000000:0CEA 00000000000000000000000000000000:0000 0A "
    "00000000:00000000 00:00000000 00000000   999        0 4 1\n"
)


def fake_proc(
    root: Path, pid: int, tcp: str, tcp6: str = "", cgroup: str = f"12:cpuacct:/docker/{CID}\n", tw: int = 0
) -> Path:
    net = root / str(pid) / "net"
    net.mkdir(parents=True)
    (root / str(pid) / "cgroup").write_text(cgroup)
    (net / "tcp").write_text(HEADER + tcp)
    (net / "tcp6").write_text(HEADER + tcp6)
    v4, v6 = tcp.count("\n"), tcp6.count("\n")
    (net / "sockstat").write_text(
        f"sockets: used 9\nTCP: inuse {v4} orphan 0 tw {tw} alloc 2 mem 1\nUDP: inuse 1 mem 0\n"
    )
    (net / "sockstat6").write_text(f"TCP6: inuse {v6}\nUDP6: inuse 0\n")
    return root


def test_tcp_sockets_are_counted_in_both_families_with_time_wait(tmp_path: Path) -> None:
    assert tcp_counts(7, CID, fake_proc(tmp_path, 7, DNS_LISTENER)) == (1, 0)
    assert tcp_counts(8, CID, fake_proc(tmp_path, 8, DNS_LISTENER + MARIADB_V4, MYSQL_V6, tw=2)) == (3, 2)
    assert tcp_counts(9, CID, tmp_path) is None
    (tmp_path / "8" / "net" / "sockstat6").write_text("garbage\n")
    assert tcp_counts(8, CID, tmp_path) is None


def test_a_listener_on_the_port_in_either_family(tmp_path: Path) -> None:
    assert listening(7, CID, 3306, fake_proc(tmp_path, 7, DNS_LISTENER)) is False  # Docker's DNS only
    assert listening(8, CID, 3306, fake_proc(tmp_path, 8, DNS_LISTENER + MARIADB_V4)) is True
    assert listening(9, CID, 3306, fake_proc(tmp_path, 9, DNS_LISTENER, MYSQL_V6)) is True
    assert listening(9, CID, 33060, tmp_path) is False
    # a connection to the port (state 01, the port on the remote side) is not a listener
    assert listening(10, CID, 3306, fake_proc(tmp_path, 10, CLIENT_TO_3306)) is False


def test_cannot_tell_is_none_never_false(tmp_path: Path) -> None:
    assert listening(0, CID, 3306, tmp_path) is None  # a remote engine reports no pid
    assert listening(7, CID, 3306, tmp_path) is None  # the process is gone
    other = fake_proc(tmp_path, 8, "", cgroup="0::/system.slice/cron.service\n")
    assert listening(8, CID, 3306, other) is None  # that pid is not the container's here
    v2 = fake_proc(tmp_path / "v2", 9, MARIADB_V4, cgroup=f"0::/system.slice/docker-{CID}.scope\n")
    assert listening(9, CID, 3306, v2) is True


def server_rig(refusals: int = 0) -> tuple[Rig, ProbeContext, list[Sql]]:
    """A fake engine whose server refuses TCP `refusals` times, then answers; the SQL
    attempts it saw."""
    r = rig()
    ctx = context(r, component("mariadb-11.8", "server", "mariadb:11.8"))
    attempts: list[Sql] = []

    @r.host.sql
    def server(call: Sql) -> list[dict[str, object]] | None:
        attempts.append(call)
        if len(attempts) <= refusals:
            raise SqlFailure(2003, "HY000", "Can't connect to MySQL server on '127.0.0.1:3306' (111)")
        return [{"ok": 1}]

    return r, ctx, attempts


async def test_no_client_runs_while_nothing_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    looks = iter([False, False, False, False, True])
    counts = ((n, 0) for n in itertools.count())  # the counts change at every look: each reads the table
    monkeypatch.setattr(procnet, "tcp_counts", lambda pid, cid: next(counts))
    monkeypatch.setattr(procnet, "listening", lambda pid, cid, port: next(looks))
    monkeypatch.setattr(procnet, "PORT_POLL", 0.001)
    _, ctx, attempts = server_rig()
    await ServerProbe(ctx).start()
    assert len(attempts) == 1  # four looks saw no listener: no exec for them
    assert next(looks, "spent") == "spent"


async def table_reads(monkeypatch: pytest.MonkeyPatch, counts: list[tuple[int, int]]) -> int:
    """A server start whose looks see `counts` (in use, TIME_WAIT) one after the other and
    whose second read of the socket table finds the listener; how many reads there were
    (a look after the last count fails the test: the listener was not found in time)."""
    looks = iter(counts)
    reads: list[int] = []
    monkeypatch.setattr(procnet, "tcp_counts", lambda pid, cid: next(looks))

    def listening(pid: int, cid: str, port: int) -> bool:
        reads.append(1)
        return len(reads) == 2

    monkeypatch.setattr(procnet, "listening", listening)
    monkeypatch.setattr(procnet, "PORT_POLL", 0.001)
    _, ctx, _ = server_rig()
    await ServerProbe(ctx).start()
    return len(reads)


async def test_the_socket_table_is_read_again_only_when_the_count_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Docker's DNS socket, then the server's listener: read at the first look and when the
    # count moved, not at every look
    assert await table_reads(monkeypatch, [(1, 0), (1, 0), (1, 0), (1, 0), (1, 0), (2, 0)]) == 2


async def test_a_listener_opened_as_a_connection_closed_is_seen_by_the_time_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a Galera joiner between two looks: its state-transfer connection closed (to TIME_WAIT)
    # and its listener opened, the count in use unchanged (measured: 5, 4, 5, 4 in 0.3 s);
    # read again at once, not after FULL_LOOK
    assert await table_reads(monkeypatch, [(4, 1), (4, 1), (4, 2)]) == 2


async def test_when_proc_cannot_tell_the_wait_polls_with_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(procnet, "tcp_counts", lambda pid, cid: None)
    _, ctx, attempts = server_rig(refusals=2)
    await ServerProbe(ctx).start()
    assert len(attempts) == 3


async def test_the_root_client_option_file_is_there_from_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(procnet, "tcp_counts", lambda pid, cid: None)
    r, ctx, _ = server_rig()
    puts: list[str] = []
    put_files = r.host.put_files

    async def counting(container_id: str, files: Iterable[Any]) -> None:
        puts.append(container_id)
        await put_files(container_id, files)

    monkeypatch.setattr(r.host, "put_files", counting)
    probe = ServerProbe(ctx)
    await probe.start()
    await probe.query("SELECT 1 AS ok")
    (c,) = r.host.started
    (cnf,) = [path for path in c.files if path.startswith(probe_context.CLIENT_FILES)]
    assert probe.root.reveal() in c.files[cnf].decode()
    assert puts == []  # no copy into the container after it started
