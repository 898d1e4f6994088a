"""No engine failure reaches the user as a raw exception string: each way a docker SDK call
can fail (its deadline, the control client's socket timeout, the engine refusing with or
without a message, the connection cut, the transport's own errors) becomes an error of
ecoready's tree whose message is one line naming the step and the engine, without the
HTTP client's words (`UnixHTTPConnectionPool(...)`, `http+docker://...`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import docker.errors
import pytest
import requests
import requests.exceptions
import urllib3.exceptions

from ecoready.domain.errors import (
    ConfigError,
    DataError,
    DeadlineExceeded,
    DockerUnavailable,
    EcoreadyError,
    EngineError,
)
from tests.support.sdk import unconnected_sdk

URL = "unix:///run/user/1000/docker.sock"
STEP = "the commit of ecoready-cache/driver:abc"
RAW = ("ConnectionPool", "http+docker", "Traceback", "\n")


def response(status: int, body: bytes = b"") -> requests.Response:
    made = requests.Response()
    made.status_code = status
    made.reason = {404: "Not Found", 500: "Internal Server Error"}.get(status, "Error")
    made._content = body
    made.url = "http+docker://localhost/v1.41/containers/abc/archive?path=%2Fusr%2Fsbin%2Fmysqld"
    return made


def api_error(status: int, body: bytes = b"") -> docker.errors.APIError:
    from docker.errors import create_api_error_from_http_exception

    try:
        create_api_error_from_http_exception(requests.exceptions.HTTPError(response=response(status, body)))
    except docker.errors.APIError as exc:
        return exc
    raise AssertionError("docker-py raised nothing")


def read_timeout() -> Exception:
    return requests.exceptions.ReadTimeout(
        "UnixHTTPConnectionPool(host='localhost', port=None): Read timed out. (read timeout=30.0)"
    )


FAILURES: dict[str, tuple[Callable[[], BaseException], type[EcoreadyError], str]] = {
    "socket timeout": (read_timeout, DeadlineExceeded, f"{STEP}: the engine at {URL} sent nothing for 30 s"),
    "urllib3 timeout": (
        lambda: urllib3.exceptions.ReadTimeoutError(urllib3.HTTPConnectionPool("localhost"), "/x", "Read timed out."),
        DeadlineExceeded,
        f"{STEP}: the engine at {URL} sent nothing for 30 s",
    ),
    "refused, said why": (
        lambda: api_error(409, b'{"message": "conflict: unable to delete image"}'),
        EngineError,
        f"{STEP}: conflict: unable to delete image",
    ),
    "refused, said nothing": (
        lambda: api_error(500),
        EngineError,
        f"{STEP}: the engine answered HTTP 500 and said nothing more",
    ),
    "connection cut": (
        lambda: requests.exceptions.ConnectionError("Connection aborted."),
        DockerUnavailable,
        "docker daemon unavailable",
    ),
    "a chunked answer broken": (
        lambda: requests.exceptions.ChunkedEncodingError(
            "UnixHTTPConnectionPool(host='localhost', port=None): invalid chunk length"
        ),
        EngineError,
        f"{STEP}: talking to the engine at {URL} failed (ChunkedEncodingError: invalid chunk length)",
    ),
    "the SDK's own": (
        lambda: docker.errors.DockerException("Error while reading from socket"),
        EngineError,
        f"{STEP}: talking to the engine at {URL} failed (DockerException: Error while reading from socket)",
    ),
}


def failed_with(exc: BaseException | None, timeout: float = 5.0) -> EcoreadyError:
    async def go() -> None:
        sdk = unconnected_sdk("local", URL, 1, "test-errors")

        def work() -> None:
            if exc is None:
                time.sleep(1)
                return
            raise exc

        try:
            await sdk.call(work, timeout=timeout, what=STEP)
        finally:
            await sdk.close(0.5)

    with pytest.raises(EcoreadyError) as caught:
        asyncio.run(go())
    return caught.value


@pytest.mark.parametrize("mode", list(FAILURES))
def test_every_engine_failure_is_one_line_naming_the_step_and_the_engine(mode: str) -> None:
    make, kind, start = FAILURES[mode]
    error = failed_with(make())
    assert type(error) is kind
    assert error.detail.startswith(start), error.detail
    assert not any(word in error.detail for word in RAW), error.detail


def test_a_deadline_names_the_step_and_the_engine() -> None:
    error = failed_with(None, timeout=0.2)
    assert isinstance(error, DeadlineExceeded)
    assert error.detail == f"{STEP} did not finish within 0 s on the engine at {URL}"


def test_every_error_of_the_tree_says_itself_in_one_line() -> None:
    def subclasses(cls: type[EcoreadyError]) -> list[type[EcoreadyError]]:
        return [cls, *(s for sub in cls.__subclasses__() for s in subclasses(sub))]

    for cls in subclasses(EcoreadyError):
        if cls in (ConfigError, DataError):
            continue  # built from parts: a Problem each (file:line:col), where and what
        try:
            error = cls("the step: what happened")
        except TypeError:
            continue  # those built from parts (ConfigError's problems, DataError's where)
        text = str(error)
        assert "\n" not in text and text.endswith("the step: what happened"), (cls, text)
