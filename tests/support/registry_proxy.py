"""A real HTTP proxy in front of the lab registry that can slow down or stall it: the
"slow registry" and "stalled pull" faults. It listens on 127.0.0.1 (an insecure registry
for the engine, like the lab's) and forwards every request to the lab registry."""

from __future__ import annotations

import http.client
import http.server
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _forward(self) -> None:
        config = self.server
        is_manifest = "/manifests/" in self.path
        is_blob = "/blobs/" in self.path and self.command == "GET"
        if is_manifest and config.manifest_delay:
            time.sleep(config.manifest_delay)
        agent = self.headers.get("User-Agent", "")
        if is_blob and config.stall_blobs.is_set() and agent.startswith(config.stall_agent):
            config.stalled += 1
            config.release.wait(600)  # hang like a dead network until the test ends
            return
        upstream = http.client.HTTPConnection(config.upstream_host, config.upstream_port, timeout=60)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        upstream.request(self.command, self.path, body=body, headers=headers)
        response = upstream.getresponse()
        data = response.read()
        self.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        upstream.close()

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = _forward


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    manifest_delay = 0.0
    stalled = 0
    stall_agent = ""  # stall only clients whose User-Agent starts with this ("docker/": the engine)

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        host, _, port = upstream.partition(":")
        self.upstream_host, self.upstream_port = host, int(port)
        self.stall_blobs = threading.Event()
        self.release = threading.Event()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"


@contextmanager
def registry_proxy(upstream: str = "127.0.0.1:5000") -> Iterator[_Server]:
    server = _Server(upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
