"""A TCP front of a test's own before a real server: it accepts connections, counts them,
and pipes each to the server byte for byte (TLS included: it terminates nothing)."""

from __future__ import annotations

import socket
import threading
import time


class CountingFront:
    """Accepts on a free port of `listen` (loopback unless told), counts connections, pipes
    each to the server on 127.0.0.1:`upstream_port`; clients name it `name`:PORT (its
    address unless told)."""

    def __init__(
        self, upstream_port: int, hold_first: float = 0.0, *, listen: str = "127.0.0.1", name: str = ""
    ) -> None:
        self.upstream_port = upstream_port
        self.accepted = 0
        self.hold_first = hold_first  # seconds the first connection's first answer is held back
        self.accepted_at_first_answer: int | None = None
        self._server = socket.create_server((listen, 0))
        self.host = f"{name or listen}:{self._server.getsockname()[1]}"
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            self.accepted += 1
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            self._open += [client, upstream]
            hold = self.hold_first if self.accepted == 1 else 0.0
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, hold), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, hold: float = 0.0) -> None:
        try:
            while data := source.recv(65536):
                if hold:
                    time.sleep(hold)
                    self.accepted_at_first_answer = self.accepted
                    hold = 0.0
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self._server.close()
        for sock in self._open:
            sock.close()
