"""A TCP front of a test's own before a real server: it accepts connections, counts them
(and the HTTP/1.1 request lines that go through), and pipes each to the server byte for
byte (TLS included: it terminates nothing)."""

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
        self.requests = 0  # plain-HTTP request lines (GET, HEAD of /v2/) seen going to the server
        self.hold_first = hold_first  # seconds from the first connection on which no answer goes back
        self._release_at = 0.0
        self.accepted_at_first_answer: int | None = None  # connections, when the first answer went back
        self.requests_at_first_answer: int | None = None  # request lines, then
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
            if self.accepted == 1:
                self._release_at = time.monotonic() + self.hold_first
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            self._open += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, 0.0, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, self._release_at), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, hold_until: float = 0.0, asks: bool = False) -> None:
        try:
            while data := source.recv(65536):
                if asks:
                    self.requests += sum(data.count(method) for method in (b"GET /v2/", b"HEAD /v2/"))
                if hold_until:
                    time.sleep(max(0.0, hold_until - time.monotonic()))
                    if self.requests_at_first_answer is None:
                        self.accepted_at_first_answer = self.accepted
                        self.requests_at_first_answer = self.requests
                    hold_until = 0.0
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self._server.close()
        for sock in self._open:
            sock.close()
