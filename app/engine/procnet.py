"""Whether a container listens on a TCP port, read from /proc on the engine's own kernel.

A readiness wait asks this before it runs a client in the container: while nothing
listens on the port, no client can get an answer. An attempt is a `docker exec`, which
costs the engine tens of milliseconds of CPU (runc, a shim, namespaces) and an emulated
client hundreds. Reading `net/tcp` costs a few milliseconds (the kernel walks its whole
socket hash table to print it), so callers read it off the event loop and only when the
namespace's TCP counts (`net/sockstat`, microseconds) have changed or a while has passed.
The counts alone cannot answer: Docker's embedded DNS holds a TCP socket in every
container on a user-defined network from the start. They are two: the sockets in use, and
those in TIME_WAIT. A Galera joiner opens its listener as it closes its state-transfer
connection: the count in use is the same from one look to the next, but the closed
connection went to TIME_WAIT (without that second count it waited 10 s for the timed read).

It answers None (cannot tell) when the engine's processes are not ours to see (a remote
or VM-backed engine, another pid namespace) or the process is gone; callers then attempt.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

LISTEN = "0A"  # the TCP state column of a listening socket in /proc/net/tcp{,6}
# Seconds between looks at a container's TCP counts (microseconds each), and at most
# between reads of its socket table (4-10 ms of kernel time for both tables). A new
# listener changes the counts, so the table is read at once then; the timed read only
# catches a listener that opened as another socket closed without a TIME_WAIT here.
PORT_POLL = 0.2
FULL_LOOK = 10.0


def _process(pid: int, container_id: str, proc: Path) -> Path | None:
    """/proc/<pid> when it is that container's process as seen from here."""
    if pid <= 0 or not container_id:
        return None
    base = proc / str(pid)
    # a different kernel's or namespace's pid is not in the container's cgroup here
    if container_id not in (base / "cgroup").read_text(encoding="ascii", errors="replace"):
        return None
    return base


def tcp_counts(pid: int, container_id: str, proc: Path = Path("/proc")) -> tuple[int, int] | None:
    """TCP sockets (IPv4 and IPv6) in use, and those in TIME_WAIT (one count for both
    families, on the `TCP:` line), in the network namespace of `pid`; None when that cannot
    be told here."""
    try:
        base = _process(pid, container_id, proc)
        if base is None:
            return None
        tables = ("sockstat", "sockstat6")
        lines = [(base / "net" / name).read_text(encoding="ascii", errors="replace") for name in tables]
    except OSError:
        return None
    counts: list[dict[str, int]] = []
    for text, protocol in zip(lines, ("TCP:", "TCP6:"), strict=True):
        fields = next((line.split() for line in text.splitlines() if line.startswith(protocol + " ")), [])
        # `TCP: inuse 2 orphan 0 tw 1 alloc 6 mem 0`, `TCP6: inuse 1`
        named = dict(zip(fields[1::2], fields[2::2], strict=False))
        if not named.get("inuse", "").isdigit():
            return None
        counts.append({name: int(value) for name, value in named.items() if value.isdigit()})
    return counts[0]["inuse"] + counts[1]["inuse"], counts[0].get("tw", 0)


def listening(pid: int, container_id: str, port: int, proc: Path = Path("/proc")) -> bool | None:
    """Whether a socket listens on `port` (any address) in the network namespace of `pid`,
    the container's init as the engine reports it; None when that cannot be told here."""
    try:
        base = _process(pid, container_id, proc)
        if base is None:
            return None
        for table in ("tcp", "tcp6"):  # IPv4 first: most servers bind 0.0.0.0
            if table_listens((base / "net" / table).read_text(encoding="ascii", errors="replace"), port):
                return True
    except OSError:
        return None
    return False


def table_listens(table: str, port: int) -> bool:
    """Whether a /proc/net/tcp table (`sl local_address rem_address st ...`, addresses as
    HEX_IP:HEX_PORT) has a LISTEN socket on `port`."""
    wanted = f"{port:04X}"
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) > 3 and fields[3] == LISTEN and fields[1].rsplit(":", 1)[-1].upper() == wanted:
            return True
    return False


async def until_listening(pid: int, container_id: str, port: int, still_waiting: Callable[[], None]) -> None:
    """Return once something listens on `port` in the container, or as soon as /proc cannot
    tell (a remote engine; the process gone: the caller's attempt then fails and says why).
    The socket table is read (a few ms of kernel time, off the event loop) when the TCP
    counts changed, and at least every FULL_LOOK seconds; `still_waiting` is
    called after each look that found nothing."""
    seen: tuple[int, int] | None = None
    looked = 0.0
    while True:
        count = tcp_counts(pid, container_id)
        if count is None:
            return
        if count != seen or time.monotonic() - looked >= FULL_LOOK:
            if await asyncio.to_thread(listening, pid, container_id, port) is not False:
                return
            seen, looked = count, time.monotonic()
        still_waiting()
        await asyncio.sleep(PORT_POLL)
