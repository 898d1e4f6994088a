"""The registry client in the three ways registries are guarded, all through the same code
(`RegistryClient.resolve`) against real docker-registry processes: anonymous, htpasswd
Basic, and Bearer tokens from a token server of ours (the distribution token spec).
Credentials come from a docker config (`auths`, `credsStore`, `credHelpers` with a real
helper program); no secret may appear in any message."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from ecoready.domain.blame import Blame, Cause, Stage, Status
from ecoready.domain.errors import LoginRequired, RegistryError
from ecoready.domain.images import Verdict
from ecoready.lab.oci_writer import RegistryWriter
from ecoready.registry.cache import DiskCache
from ecoready.registry.client import RegistryClient
from ecoready.registry.credentials import DockerCredentials
from ecoready.registry.early import PER_REGISTRY
from tests.support.cli import ecoready, one_image_matrix
from tests.support.registry_servers import (
    Registry,
    TokenServer,
    credential_helper,
    docker_config,
    htpasswd_auth,
    push_tiny_index,
    start_registry,
)

USER = "alice"
PASSWORD = "pw-" + secrets.token_hex(12)  # per session: a canary that must never be shown


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("registries")


@pytest.fixture(scope="module")
def open_registry(work: Path) -> Iterator[tuple[Registry, dict[str, str]]]:
    """An anonymous registry holding tiny multi-arch images; the guarded ones serve its storage."""
    storage = work / "storage"
    storage.mkdir()
    registry = start_registry(work, storage)
    writer = RegistryWriter(registry.url)
    try:
        digests = {repo: push_tiny_index(writer, repo, "1") for repo in ("test/tiny", "private/tiny")}
    finally:
        writer.close()
    yield registry, digests
    registry.stop()


@pytest.fixture(scope="module")
def basic_registry(work: Path, open_registry: tuple[Registry, dict[str, str]]) -> Iterator[Registry]:
    registry = start_registry(work, work / "storage", auth=htpasswd_auth(work, USER, PASSWORD), readonly=True)
    yield registry
    registry.stop()


@pytest.fixture(scope="module")
def token_server(work: Path) -> Iterator[TokenServer]:
    server = TokenServer(work, {USER: PASSWORD})
    yield server
    server.stop()


@pytest.fixture(scope="module")
def token_registry(
    work: Path, open_registry: tuple[Registry, dict[str, str]], token_server: TokenServer
) -> Iterator[Registry]:
    registry = start_registry(work, work / "storage", auth=token_server.auth_yaml(), readonly=True)
    yield registry
    registry.stop()


def client_for(work: Path, config: Mapping[str, object] | None = None) -> RegistryClient:
    path = docker_config(work, dict(config or {})) / "config.json"
    return RegistryClient(credentials=DockerCredentials(path), cache=DiskCache(work / "cache-unused"), deadline=20)


def auths(host: str, password: str = PASSWORD) -> dict[str, object]:
    return {"auths": {host: {"auth": base64.b64encode(f"{USER}:{password}".encode()).decode()}}}


def assert_no_secret(*texts: str) -> None:
    encoded = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    for text in texts:
        assert PASSWORD not in text
        assert encoded not in text


async def both_arches(client: RegistryClient, reference: str) -> dict[str, Verdict]:
    async with client:
        return {arch: (await client.resolve(reference, arch)).verdict for arch in ("amd64", "arm64")}


async def expect_error(client: RegistryClient, reference: str) -> RegistryError:
    async with client:
        with pytest.raises(RegistryError) as caught:
            await client.resolve(reference, "amd64")
    error = caught.value
    assert_no_secret(str(error), repr(error), "".join(traceback.format_exception(error)))
    return error


# -- anonymous -------------------------------------------------------------------------
async def test_anonymous_registry_answers_per_arch_with_digests(
    work: Path, open_registry: tuple[Registry, dict[str, str]]
) -> None:
    registry, digests = open_registry
    served = registry.requests()
    client = RegistryClient(cache=False)
    async with client:
        amd = await client.resolve(f"{registry.host}/test/tiny:1", "amd64")
        arm = await client.resolve(f"{registry.host}/test/tiny:1", "arm64")
    assert (amd.verdict, arm.verdict) == (Verdict.AVAILABLE, Verdict.AVAILABLE)
    assert amd.index_digest == arm.index_digest == digests["test/tiny"]
    assert amd.digest != arm.digest and amd.found_as == "index"
    assert arm.pull_reference == f"{registry.host}/test/tiny@{arm.digest}"
    # the client's own count agrees with the registry's access log
    assert client.statuses()[0].requests == registry.requests() - served == 5  # index, 2 manifests, 2 configs


# -- htpasswd (Basic) --------------------------------------------------------------------
async def test_basic_auth_with_auths_in_the_docker_config(work: Path, basic_registry: Registry) -> None:
    verdicts = await both_arches(client_for(work, auths(basic_registry.host)), f"{basic_registry.host}/private/tiny:1")
    assert verdicts == {"amd64": Verdict.AVAILABLE, "arm64": Verdict.AVAILABLE}


async def test_basic_auth_without_credentials_is_an_error_naming_the_registry(
    work: Path, basic_registry: Registry
) -> None:
    error = await expect_error(client_for(work), f"{basic_registry.host}/test/tiny:1")
    assert error.registry == basic_registry.host
    assert basic_registry.host in str(error) and "no credentials" in str(error)
    # a login the user has not given: the cell is `locked` with it to provide, not the tool's error
    assert isinstance(error, LoginRequired) and error.blame(Stage.IMAGE) == Blame(Cause.NEEDS_LOGIN, error.registry)


async def test_basic_auth_wrong_password_names_the_registry_and_no_secret(work: Path, basic_registry: Registry) -> None:
    wrong = "pw-" + secrets.token_hex(12)
    client = client_for(work, auths(basic_registry.host, wrong))
    error = await expect_error(client, f"{basic_registry.host}/test/tiny:1")
    assert str(error).startswith(f"{basic_registry.host}: the credentials for {basic_registry.host} were not accepted")
    assert not isinstance(error, LoginRequired)  # a login given and refused: the registry's trouble, said as such
    assert wrong not in str(error) and wrong not in repr(error)
    assert client.statuses()[0].error == error.reason


async def test_basic_auth_through_a_creds_store_helper(
    work: Path, basic_registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    helper = credential_helper(work, "ecotest", {basic_registry.host: (USER, PASSWORD)})
    monkeypatch.setenv("PATH", f"{helper}{os.pathsep}{os.environ['PATH']}")
    client = client_for(work, {"credsStore": "ecotest"})
    verdicts = await both_arches(client, f"{basic_registry.host}/test/tiny:1")
    assert verdicts == {"amd64": Verdict.AVAILABLE, "arm64": Verdict.AVAILABLE}
    assert (helper / "asked.log").read_text().split() == [basic_registry.host]  # asked once per run


async def test_basic_auth_through_cred_helpers_per_registry(
    work: Path, basic_registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    helper = credential_helper(work, "ecotest2", {basic_registry.host: (USER, PASSWORD)})
    monkeypatch.setenv("PATH", f"{helper}{os.pathsep}{os.environ['PATH']}")
    config = {"credHelpers": {basic_registry.host: "ecotest2"}, "credsStore": "absent-helper-never-asked"}
    verdicts = await both_arches(client_for(work, config), f"{basic_registry.host}/private/tiny:1")
    assert verdicts == {"amd64": Verdict.AVAILABLE, "arm64": Verdict.AVAILABLE}


# -- token (Bearer) ----------------------------------------------------------------------
async def test_anonymous_bearer_token_one_per_repository(
    work: Path, token_registry: Registry, token_server: TokenServer
) -> None:
    before = len(token_server.issued)
    client = client_for(work)
    verdicts = await both_arches(client, f"{token_registry.host}/test/tiny:1")
    assert verdicts == {"amd64": Verdict.AVAILABLE, "arm64": Verdict.AVAILABLE}
    assert token_server.issued[before:] == [("", "repository:test/tiny:pull")]


async def test_a_fan_out_at_once_is_refused_with_401_at_most_once_per_request_of_its_first_wave(
    work: Path, token_registry: Registry, token_server: TokenServer
) -> None:
    """The first requests to a registry go at once, before its challenge is known: each of
    that wave is refused once and asks again with the token; the rest wait for the
    challenge and ask with the token up front. One token for the one repository."""
    before, served_before = len(token_server.issued), token_registry.requests()
    tags = ["1", *(f"absent{n}" for n in range(11))]
    async with client_for(work) as client:
        found = await asyncio.wait_for(
            asyncio.gather(*(client.resolve(f"{token_registry.host}/test/tiny:{tag}", "amd64") for tag in tags)), 60
        )
    assert [f.verdict for f in found] == [Verdict.AVAILABLE] + [Verdict.MISSING] * 11
    assert token_server.issued[before:] == [("", "repository:test/tiny:pull")]
    served = [line for line in token_registry.log.read_text().splitlines() if line.startswith("127.0.0.1 - ")]
    refused = [line for line in served[served_before:] if '" 401 ' in line]
    assert len(refused) == PER_REGISTRY < len(tags)


async def test_bearer_private_repository_needs_credentials(work: Path, token_registry: Registry) -> None:
    error = await expect_error(client_for(work), f"{token_registry.host}/private/tiny:1")
    assert "access to private/tiny refused" in str(error) and token_registry.host in str(error)
    assert isinstance(error, LoginRequired) and error.blame(Stage.IMAGE).status is Status.LOCKED


async def test_bearer_token_with_credentials_from_a_helper(
    work: Path, token_registry: Registry, token_server: TokenServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    helper = credential_helper(work, "ecotest3", {token_registry.host: (USER, PASSWORD)})
    monkeypatch.setenv("PATH", f"{helper}{os.pathsep}{os.environ['PATH']}")
    before, served_before = len(token_server.issued), token_registry.requests()
    client = client_for(work, {"credsStore": "ecotest3"})
    async with client:
        found = [
            await client.resolve(f"{token_registry.host}/{repo}:1", arch)
            for repo in ("private/tiny", "test/tiny")
            for arch in ("amd64", "arm64")
        ]
    assert [f.verdict for f in found] == [Verdict.AVAILABLE] * 4
    # one token per repository; the second asked up front with the challenge learned first
    assert token_server.issued[before:] == [(USER, "repository:private/tiny:pull"), (USER, "repository:test/tiny:pull")]
    served = [line for line in token_registry.log.read_text().splitlines() if line.startswith("127.0.0.1 - ")]
    assert [line for line in served[served_before:] if '" 401 ' in line] == served[served_before : served_before + 1]


async def test_bearer_wrong_password_is_an_auth_error_without_the_secret(
    work: Path, token_registry: Registry, token_server: TokenServer
) -> None:
    refused = token_server.refused
    error = await expect_error(
        client_for(work, auths(token_registry.host, "not-" + PASSWORD)), f"{token_registry.host}/test/tiny:1"
    )
    assert token_server.refused == refused + 1
    assert str(error).startswith(f"{token_registry.host}: token refused")
    assert f"credentials for {token_registry.host} were not accepted" in str(error)
    assert "not-" + PASSWORD not in str(error)
    assert not isinstance(error, LoginRequired)


def test_the_images_verb_with_a_wrong_password_says_so_and_shows_no_secret(
    work: Path, basic_registry: Registry, tmp_path: Path
) -> None:
    config = docker_config(work, auths(basic_registry.host, "x" + PASSWORD))
    matrix = one_image_matrix(tmp_path, f"{basic_registry.host}/test/tiny:1")
    result = ecoready("images", "--matrix", str(matrix), "--json", "-", env={"DOCKER_CONFIG": str(config)})
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    assert {c["verdict"] for c in report["checks"]} == {"error"}
    host = basic_registry.host
    assert f"registry {host}: the credentials for {host} were not accepted" in result.stderr
    assert_no_secret(result.stdout, result.stderr)
    assert "x" + PASSWORD not in result.stdout + result.stderr


def test_the_images_verb_without_a_login_says_locked_with_what_to_give(
    work: Path, basic_registry: Registry, tmp_path: Path
) -> None:
    # the registry answered (it wants a login): neither a missing image nor the tool's error
    config = docker_config(work, {})
    matrix = one_image_matrix(tmp_path, f"{basic_registry.host}/test/tiny:1")
    result = ecoready("images", "--matrix", str(matrix), "--json", "-", env={"DOCKER_CONFIG": str(config)})
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["summary"] == {"locked": len(report["checks"])}
    for check in report["checks"]:
        assert basic_registry.host in check["detail"] and "no credentials" in check["detail"], check
    assert "not checked" not in result.stderr  # the registry was asked, and answered
    text = ecoready("images", "--matrix", str(matrix), env={"DOCKER_CONFIG": str(config), "NO_COLOR": "1"})
    assert text.returncode == 1 and " locked " in text.stdout, text.stdout
    # doctor: the registry answers, the image is locked; nothing there would stop a run
    doctor = ecoready("doctor", "--matrix", str(matrix), env={"DOCKER_CONFIG": str(config), "NO_COLOR": "1"})
    said = [line for line in doctor.stdout.splitlines() if f"registry {basic_registry.host}" in line]
    assert len(said) == 1 and "answers; " in said[0] and "is locked: " in said[0], doctor.stdout
