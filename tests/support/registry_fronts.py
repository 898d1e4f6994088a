"""Fronts (stdlib HTTP servers) that give a real registry (tests/support/registry_servers.py)
the manners of others: Docker Hub's rate-limit headers, HEAD refused, 429 with
Retry-After, a 500 for a moment, one repository that never answers. Requests go over real
sockets to the real registry binary: nothing here replaces a transport."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from tests.support.registry_servers import free_port


# -- Docker Hub's rate-limit headers in front of a real registry ----------------------------
@dataclass
class RateLimitedFront:
    """A reverse proxy to a real registry that answers as Docker Hub does about its pull
    limit: `RateLimit-Limit`/`RateLimit-Remaining` (`N;w=SECONDS`), `docker-ratelimit-source`
    (the client's address), and 429 TOOMANYREQUESTS once nothing remains. Docker Hub itself
    cannot be reached from here; its headers can be served for real."""

    upstream: str  # http://127.0.0.1:PORT
    remaining: int
    limit: int = 100
    window: int = 21600
    source: str = "203.0.113.7"  # an address from the documentation range

    def __post_init__(self) -> None:
        self.port = free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.lock = threading.Lock()

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        front = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def _answer(self, method: str) -> None:
                with front.lock:
                    left = front.remaining
                    front.remaining = max(0, left - 1)
                limits = {
                    "RateLimit-Limit": f"{front.limit};w={front.window}",
                    "RateLimit-Remaining": f"{max(0, left - 1)};w={front.window}",
                    "docker-ratelimit-source": front.source,
                }
                if left <= 0:
                    body = b'{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your pull rate limit."}]}'
                    self.send_response(429)
                    for key, value in {**limits, "Content-Type": "application/json"}.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("accept", "authorization")}
                reply = httpx.request(method, front.upstream + self.path, headers=headers, timeout=10)
                self.send_response(reply.status_code)
                for key, value in reply.headers.items():
                    if key.lower() in ("content-type", "docker-content-digest", "www-authenticate", "content-length"):
                        self.send_header(key, value)
                for key, value in limits.items():
                    self.send_header(key, value)
                self.end_headers()
                if method != "HEAD":
                    self.wfile.write(reply.content)

            def do_GET(self) -> None:
                self._answer("GET")

            def do_HEAD(self) -> None:
                self._answer("HEAD")

        return Handler


# -- registries with the manners of the wild, in front of a real one ---------------------
@dataclass
class MannersFront:
    """A reverse proxy to a real registry that misbehaves as registries in the wild do, on
    real sockets: it refuses HEAD on manifests (`head_answer` 405, 501, or a bare 404),
    throttles (`throttle` requests answered 429 with `retry_after`: seconds, or `date:N`
    for an HTTP date N seconds ahead, or "" for no header), and never answers requests for
    the repositories in `hang`, and answers `fail` manifest requests with a 500 as Docker's
    distribution does while a push rewrites the tag read. It keeps every (method, path) it
    was asked."""

    upstream: str  # http://127.0.0.1:PORT
    head_answer: int | None = None
    throttle: int = 0
    retry_after: str = "1"
    hang: frozenset[str] = frozenset()
    fail: int = 0
    asked: list[tuple[str, str]] = field(default_factory=list)
    throttled: int = 0

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.port = free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def count(self, method: str = "", contains: str = "") -> int:
        with self.lock:
            return sum(1 for m, p in self.asked if (not method or m == method) and contains in p)

    def _retry_after(self) -> str:
        if self.retry_after.startswith("date:"):
            return formatdate(time.time() + float(self.retry_after[5:]), usegmt=True)
        return self.retry_after

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def _status(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
                self.send_response(status)
                for key, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(key, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _answer(self) -> None:
                with front.lock:
                    front.asked.append((self.command, self.path))
                    throttle = front.throttle > 0 and self.path != "/v2/"
                    if throttle:
                        front.throttle -= 1
                        front.throttled += 1
                    fail = front.fail > 0 and "/manifests/" in self.path
                    if fail:
                        front.fail -= 1
                repository = self.path.removeprefix("/v2/").split("/manifests/")[0].split("/tags/")[0]
                if repository in front.hang:
                    front.release.wait(120)  # like a backend that never answers
                    self.close_connection = True
                    return
                if fail:
                    detail = b"invalid checksum digest format"
                    body = b'{"errors":[{"code":"UNKNOWN","message":"unknown error","detail":"' + detail + b'"}]}'
                    self._status(500, {"Content-Type": "application/json; charset=utf-8"}, body)
                    return
                if throttle:
                    wait = front._retry_after()
                    body = b'{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]}'
                    headers = {"Content-Type": "application/json", **({"Retry-After": wait} if wait else {})}
                    self._status(429, headers, body)
                    return
                if self.command == "HEAD" and "/manifests/" in self.path and front.head_answer:
                    self._status(front.head_answer, {"Content-Type": "application/json"})
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("accept", "authorization")}
                reply = httpx.request(self.command, front.upstream + self.path, headers=headers, timeout=10)
                kept = ("content-type", "docker-content-digest", "www-authenticate", "link")
                self._status(
                    reply.status_code,
                    {k: v for k, v in reply.headers.items() if k.lower() in kept},
                    reply.content,
                )

            do_GET = do_HEAD = _answer

        return Handler
