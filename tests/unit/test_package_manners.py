"""A package registry as a stranger could run it, served over real HTTP by a fake PyPI in
this process (ECOREADY_PYPI_URL points at it): releases yanked (PEP 592), files at URLs of
other schemes, 429s with `Retry-After`, answers held while a cell runs out of its budget
(the one single-flight, app/domain/flight.py). Every error names the registry and the URL."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ecoready.domain.drivers import parse_driver
from ecoready.domain.errors import MatrixMismatch, RegistryError
from ecoready.domain.packaging import Packaging
from ecoready.packages.client import PackageClient
from ecoready.packages.http import PackageHttp
from tests.support.flights import first_cancelled, serving


def wheel(name: str, version: str, *, yanked: str | None = None) -> dict[str, object]:
    entry: dict[str, object] = {
        "filename": f"{name}-{version}-py3-none-any.whl",
        "packagetype": "bdist_wheel",
        "url": f"/files/{name}-{version}-py3-none-any.whl",
    }
    if yanked is not None:
        entry |= {"yanked": True, "yanked_reason": yanked or None}
    return entry


@dataclass
class FakePypi:
    documents: dict[str, bytes] = field(default_factory=dict)
    busy: dict[str, list[str]] = field(default_factory=dict)  # path -> Retry-After values, one per 429
    asked: list[str] = field(default_factory=list)
    url: str = ""
    held: set[str] = field(default_factory=set)  # paths answered only once `gate` is set
    gate: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def pypi(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakePypi]:
    fake = FakePypi()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fake.asked.append(self.path)
            if self.path in fake.held:
                fake.gate.wait(10)
            waits = fake.busy.get(self.path)
            if waits:
                self.send_response(429)
                if waits[0]:
                    self.send_header("Retry-After", waits.pop(0))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = fake.documents.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, format: str, *args: object) -> None:
            pass

    with serving(Handler, fake.gate) as host:
        fake.url = f"http://{host}"
        monkeypatch.setenv("ECOREADY_PYPI_URL", fake.url)
        yield fake


def publish(fake: FakePypi, name: str, releases: dict[str, list[dict[str, object]]]) -> None:
    fake.documents[f"/pypi/{name}/json"] = json.dumps({"info": {"name": name}, "releases": releases}).encode()


def assess(spec: str, arch: str = "arm64") -> Packaging:
    async def go() -> Packaging:
        async with PackageClient() as client:
            return await client.assess(parse_driver(spec), arch)

    return asyncio.run(go())


def test_a_yanked_release_is_taken_only_for_an_exact_pin(pypi: FakePypi) -> None:
    publish(
        pypi,
        "x",
        {
            "1.0": [wheel("x", "1.0")],
            "1.1": [wheel("x", "1.1", yanked="broken on arm64")],
            "1.2": [wheel("x", "1.2", yanked="")],
        },
    )
    assert assess("pypi:x").version == "1.0"  # the newest not yanked
    assert assess("pypi:x==1.*").version == "1.0"  # a wildcard is a range
    pinned = assess("pypi:x==1.1")
    assert pinned.version == "1.1"
    assert "1.1 is yanked: broken on arm64 (taken for the exact pin, as pip does)" in pinned.detail
    assert "1.2 is yanked (taken" in assess("pypi:x===1.2").detail
    with pytest.raises(MatrixMismatch, match=r"no release of x matching it \(newest: 1.0\); 1.1, 1.2 yanked"):
        assess("pypi:x>=1.1")


def test_a_file_url_of_another_scheme_is_refused_naming_the_registry_and_the_url(pypi: FakePypi) -> None:
    sdist: dict[str, object] = {"filename": "y-1.0.tar.gz", "packagetype": "sdist", "url": "file:///etc/passwd"}
    publish(pypi, "y", {"1.0": [sdist]})
    with pytest.raises(RegistryError) as caught:
        assess("pypi:y")
    said = str(caught.value)
    host = pypi.url.removeprefix("http://")
    assert said.startswith(f"{host}: "), said
    assert f"handed out file:///etc/passwd named by {pypi.url}/pypi/y/json" in said
    assert "only http and https" in said
    assert pypi.asked == ["/pypi/y/json"]


def test_a_429_with_retry_after_is_waited_for_within_the_budget(pypi: FakePypi) -> None:
    publish(pypi, "z", {"1.0": [wheel("z", "1.0")]})
    pypi.busy["/pypi/z/json"] = ["1"]
    start = time.monotonic()
    assert assess("pypi:z").version == "1.0"
    assert time.monotonic() - start >= 1.0
    assert pypi.asked == ["/pypi/z/json", "/pypi/z/json"]


def test_a_429_asking_more_than_the_budget_fails_at_once_saying_so(pypi: FakePypi) -> None:
    publish(pypi, "z", {"1.0": [wheel("z", "1.0")]})
    pypi.busy["/pypi/z/json"] = ["600"]
    start = time.monotonic()
    with pytest.raises(RegistryError) as caught:
        assess("pypi:z")
    assert time.monotonic() - start < 5
    said = str(caught.value)
    assert pypi.url.removeprefix("http://") in said and f"{pypi.url}/pypi/z/json" in said
    assert "asked to wait 600 s, over the 10 s a run waits per registry" in said


def test_every_failure_names_the_registry_and_the_url(pypi: FakePypi) -> None:
    pypi.busy["/pypi/w/json"] = [""]  # a 429 without Retry-After
    with pytest.raises(RegistryError, match=r"HTTP 429, no Retry-After\) for http://127\.0\.0\.1:\d+/pypi/w/json"):
        assess("pypi:w")


def test_a_verdict_asked_by_two_cells_outlives_the_first_cell_out_of_budget(pypi: FakePypi) -> None:
    """The packaging verdict's flight (packages/client.py) and the URL's (packages/http.py):
    a cell out of its budget leaves, the other cell gets the verdict, the URL asked once."""
    publish(pypi, "v", {"1.0": [wheel("v", "1.0")]})
    pypi.held.add("/pypi/v/json")

    async def go() -> Packaging:
        async with PackageClient() as client:
            return await first_cancelled(lambda: client.assess(parse_driver("pypi:v"), "arm64"), pypi.gate.set)

    assert asyncio.run(go()).version == "1.0"
    assert pypi.asked == ["/pypi/v/json"]


def test_a_url_asked_twice_outlives_the_first_asker_out_of_budget(pypi: FakePypi) -> None:
    """packages/http.py alone: two verdicts of other arches reading the same document."""
    publish(pypi, "u", {"1.0": [wheel("u", "1.0")]})
    pypi.held.add("/pypi/u/json")
    url = f"{pypi.url}/pypi/u/json"

    async def go() -> bytes | None:
        http = PackageHttp()
        try:
            return await first_cancelled(lambda: http.get(url), pypi.gate.set)
        finally:
            await http.aclose()

    assert asyncio.run(go()) == pypi.documents["/pypi/u/json"]
    assert pypi.asked == ["/pypi/u/json"]


def test_a_webhook_that_answers_without_end_is_not_read() -> None:
    """The check's webhook answers 200 and then sends bytes forever: only its status is
    read, so the check goes on at once with bounded memory."""
    from ecoready.judge.webhook import post

    class Endless(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b"x" * 65536)
            except OSError:
                pass

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        start = time.monotonic()
        said = asyncio.run(post(f"http://127.0.0.1:{server.server_address[1]}/hook", {"x": 1}, total_s=20))
        assert said is None
        assert time.monotonic() - start < 5
    finally:
        server.shutdown()
        server.server_close()
