"""A slow engine, made on purpose: a unix socket in front of the real engine's that relays
every byte both ways, and holds back the engine's answer to a chosen kind of request (a
commit: `POST /v1.NN/commit`) for `hold` seconds, as a busy machine's engine does while it
writes a large container's layer. Everything else passes at once."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ENGINE_SOCKET = "/var/run/docker.sock"


@dataclass
class SlowEngine:
    path: Path
    hold: float
    pattern: re.Pattern[bytes]
    held: int = 0  # answers held back so far
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"unix://{self.path}"


def _shut(*socks: socket.socket) -> None:
    """End both directions of a proxied connection (either side may be gone already)."""
    for sock in socks:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _pipe(source: socket.socket, target: socket.socket, before: threading.Event | None, engine: SlowEngine) -> None:
    """Bytes from `source` to `target`; when `before` is set, wait `hold` first (once)."""
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            if before is not None and before.is_set():
                before.clear()
                with engine._lock:
                    engine.held += 1
                time.sleep(engine.hold)
            target.sendall(data)
    except OSError:
        pass
    finally:
        _shut(source, target)


def _requests(source: socket.socket, target: socket.socket, flag: threading.Event, engine: SlowEngine) -> None:
    """Bytes from the client to the engine; a request matching the pattern flags the answer."""
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            if engine.pattern.search(data):
                flag.set()
            target.sendall(data)
    except OSError:
        pass
    finally:
        _shut(source, target)


@contextmanager
def slow_engine(folder: Path, *, hold: float, what: str = "commit") -> Iterator[SlowEngine]:
    """An engine socket in `folder` whose answers to `what` requests come `hold` s late."""
    path = folder / "slow-docker.sock"
    engine = SlowEngine(path, hold, re.compile(rb"^POST /v[0-9.]+/" + what.encode() + rb"\b", re.MULTILINE))
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(16)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                client, _ = server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(ENGINE_SOCKET)
            flag = threading.Event()
            threading.Thread(target=_requests, args=(client, upstream, flag, engine), daemon=True).start()
            threading.Thread(target=_pipe, args=(upstream, client, flag, engine), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield engine
    finally:
        stop.set()
        server.close()
        path.unlink(missing_ok=True)
