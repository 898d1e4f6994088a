"""The registry client's pure parts: references, mirrors, index platforms, challenges and
Docker Hub's rate-limit headers; the docker config's credentials; the on-disk cache."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from email.utils import formatdate
from pathlib import Path

import pytest

from ecoready.domain.errors import CredentialError
from ecoready.domain.images import Availability, ImageCheck, ImagesReport, RegistryStatus, Verdict
from ecoready.domain.retry_after import retry_after
from ecoready.matrix.mirrors import parse_mirror
from ecoready.registry.cache import DiskCache, digest_of
from ecoready.registry.credentials import DockerCredentials, Login, registry_key, server_url
from ecoready.registry.headers import parse_challenge, parse_rate_limit
from ecoready.registry.manifests import (
    ImageRef,
    index_platforms,
    manifest_size,
    on_mirror,
    parse_reference,
    pick_entry,
)
from ecoready.report.images_table import render_json, render_table


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("mysql:8.4", ImageRef("docker.io", "library/mysql", "8.4")),
        ("mysql", ImageRef("docker.io", "library/mysql", "latest")),
        ("percona/percona-server:8.0", ImageRef("docker.io", "percona/percona-server", "8.0")),
        ("index.docker.io/library/mariadb:11", ImageRef("docker.io", "library/mariadb", "11")),
        ("ghcr.io/owner/x:1.2", ImageRef("ghcr.io", "owner/x", "1.2")),
        ("127.0.0.1:5000/lab/mariadb:10.11", ImageRef("127.0.0.1:5000", "lab/mariadb", "10.11")),
        ("localhost/x@sha256:" + "a" * 64, ImageRef("localhost", "x", None, "sha256:" + "a" * 64)),
        (
            "container-registry.oracle.com/mysql/community-server:8.4",
            ImageRef("container-registry.oracle.com", "mysql/community-server", "8.4"),
        ),
    ],
)
def test_references_are_normalised_like_docker_does(text: str, ref: ImageRef) -> None:
    assert parse_reference(text) == ref


def test_docker_hub_is_asked_at_its_api_host() -> None:
    assert parse_reference("mysql:8.4").api_host == "registry-1.docker.io"
    assert parse_reference("quay.io/x/y:1").api_host == "quay.io"


@pytest.mark.parametrize(
    ("mirror", "expected"),
    [
        ("127.0.0.1:5000", "127.0.0.1:5000/library/mysql:8.4"),
        ("mirror.example:5000/hub/", "mirror.example:5000/hub/library/mysql:8.4"),
        (None, "docker.io/library/mysql:8.4"),
    ],
)
def test_the_mirror_keeps_the_repository_path(mirror: str | None, expected: str) -> None:
    on = parse_mirror("docker.io", mirror) if mirror else None
    assert str(on_mirror(parse_reference("mysql:8.4"), on)) == expected


def entry(arch: str, os_name: str = "linux", variant: str | None = None, **annotations: str) -> dict:
    platform = {"architecture": arch, "os": os_name} | ({"variant": variant} if variant else {})
    out = {"digest": f"sha256:{arch}{variant or ''}{os_name}", "platform": platform}
    return out | ({"annotations": annotations} if annotations else {})


def test_index_platforms_skip_attestations_windows_and_32_bit_arm() -> None:
    index = {
        "manifests": [
            entry("amd64"),
            entry("aarch64", variant="v8"),
            entry("unknown", "unknown", **{"vnd.docker.reference.type": "attestation-manifest"}),
            entry("amd64", "windows"),
            entry("arm", variant="v7"),
            entry("arm64", variant="v9"),
            entry("x86_64", variant="v3"),
            entry("s390x\x1b[31m"),  # from a registry: made safe to show
        ]
    }
    assert [a for a, _ in index_platforms(index)] == ["amd64", "arm64", "amd64", "s390x31m"]
    platforms = index_platforms(index)
    amd64, arm64 = pick_entry(platforms, "amd64"), pick_entry(platforms, "arm64")
    assert amd64 is not None and amd64["platform"] == {"architecture": "amd64", "os": "linux"}
    assert arm64 is not None and arm64["platform"]["variant"] == "v8"
    assert pick_entry(platforms, "ppc64le") is None


def test_index_platforms_survive_garbage() -> None:
    assert index_platforms({"manifests": "nope"}) == []
    assert index_platforms({"manifests": [1, None, {"platform": "x"}]}) == []


def test_manifest_size_counts_config_and_layers() -> None:
    assert manifest_size({"config": {"size": 10}, "layers": [{"size": 100}, {"size": 5}]}) == 115


def test_challenges_parse() -> None:
    scheme, params = parse_challenge(
        'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/mysql:pull"'
    )
    assert scheme == "bearer"
    assert params == {
        "realm": "https://auth.docker.io/token",
        "service": "registry.docker.io",
        "scope": "repository:library/mysql:pull",
    }
    assert parse_challenge('Basic realm="Registry Realm"') == ("basic", {"realm": "Registry Realm"})


@pytest.mark.parametrize(
    ("header", "parsed"),
    [("100;w=21600", (100, 21600)), ("76", (76, None)), ("", (None, None)), ("x;w=y", (None, None))],
)
def test_docker_hub_rate_limit_headers_parse(header: str, parsed: tuple) -> None:
    assert parse_rate_limit(header) == parsed


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after("30") == 30.0 and retry_after(" 0 ") == 0.0
    ahead = retry_after(formatdate(time.time() + 90, usegmt=True))
    assert ahead is not None and 88 <= ahead <= 90  # whole seconds in a date
    assert retry_after(formatdate(time.time() - 90, usegmt=True)) == 0.0  # past: at once
    for nonsense in ("", "soon", "-5", "1.5e9", "Mon, 99 Foo 2026"):
        assert retry_after(nonsense) is None, nonsense


# -- credentials -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("key", "normal"),
    [
        ("https://index.docker.io/v1/", "docker.io"),
        ("registry-1.docker.io", "docker.io"),
        ("http://myreg:5000/v2/", "myreg:5000"),
        ("GHCR.io", "ghcr.io"),
    ],
)
def test_config_keys_normalise(key: str, normal: str) -> None:
    assert registry_key(key) == normal


def test_helpers_are_asked_for_docker_hub_by_its_v1_url() -> None:
    assert server_url("docker.io") == "https://index.docker.io/v1/"
    assert server_url("ghcr.io") == "ghcr.io"


def write_config(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


def test_auths_in_both_spellings(tmp_path: Path) -> None:
    auth = base64.b64encode(b"bob:s3cr3t:with:colons").decode()
    path = write_config(
        tmp_path,
        {
            "auths": {
                "https://index.docker.io/v1/": {"auth": auth},
                "ghcr.io": {"username": "carol", "password": "pat"},
                "quay.io": {"identitytoken": "tok"},  # not supported: asked anonymously
            }
        },
    )
    found = DockerCredentials(path)
    assert found("docker.io") == Login("bob", "s3cr3t:with:colons")
    assert found("ghcr.io") == Login("carol", "pat")
    assert found("quay.io") is None and found("elsewhere:5000") is None
    assert "s3cr3t" not in repr(found("docker.io"))


def test_no_config_means_no_credentials(tmp_path: Path) -> None:
    assert DockerCredentials(tmp_path / "absent.json")("docker.io") is None


def test_a_broken_config_or_helper_is_a_credential_error_without_content(tmp_path: Path) -> None:
    path = write_config(tmp_path, {})
    path.write_text('{"auths": {"x": {"auth": "s3cr3t-not-base64!"}}')
    with pytest.raises(CredentialError) as caught:
        DockerCredentials(path)("x")
    assert "s3cr3t" not in str(caught.value) and str(path) in str(caught.value)
    path = write_config(tmp_path, {"auths": {"x": {"auth": "%%%"}}})
    with pytest.raises(CredentialError, match="unreadable auth for x"):
        DockerCredentials(path)("x")
    path = write_config(tmp_path, {"credsStore": "ecoready-no-such-helper"})
    with pytest.raises(CredentialError, match=r"docker-credential-ecoready-no-such-helper .* not on PATH"):
        DockerCredentials(path)("docker.io")


def test_a_failing_helper_is_named_without_its_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    helper = tmp_path / "docker-credential-loud"
    helper.write_text("#!/bin/sh\necho 'leaked-s3cr3t'; echo 'leaked-s3cr3t' >&2; exit 3\n")
    helper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(CredentialError) as caught:
        DockerCredentials(write_config(tmp_path, {"credHelpers": {"ghcr.io": "loud"}}))("ghcr.io")
    assert str(caught.value) == "docker-credential-loud failed (exit 3)"


def test_a_helper_without_the_entry_falls_back_to_auths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    helper = tmp_path / "docker-credential-empty"
    helper.write_text("#!/bin/sh\necho 'credentials not found in native keychain'; exit 1\n")
    helper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    config = {"credsStore": "empty", "auths": {"ghcr.io": {"username": "u", "password": "p"}}}
    found = DockerCredentials(write_config(tmp_path, config))
    assert found("ghcr.io") == Login("u", "p")
    assert found("quay.io") is None


# -- the disk cache ----------------------------------------------------------------------
def test_the_cache_keeps_bodies_by_digest_and_drops_tampered_ones(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path / "c")
    body = b'{"schemaVersion": 2}'
    digest = digest_of(body)
    cache.put(digest, body)
    cache.put("sha256:" + "0" * 64, body)  # does not match: refused
    assert cache.get(digest) == body and cache.get("sha256:" + "0" * 64) is None
    stored = tmp_path / "c" / "sha256" / hashlib.sha256(body).hexdigest()
    stored.write_bytes(b'{"schemaVersion": 1}')
    assert cache.get(digest) is None and not stored.exists()
    cache.remember("r:5000/x:1", digest)
    assert cache.tag("r:5000/x:1") == digest and cache.tag("r:5000/x:2") is None


def test_an_unwritable_cache_turns_itself_off(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = DiskCache(blocker / "c")
    body = b"{}"
    cache.put(digest_of(body), body)
    assert not cache.enabled and cache.get(digest_of(body)) is None


# -- the images table ----------------------------------------------------------------------
def test_the_images_table_is_inert_and_the_json_complete() -> None:
    hostile = "\x1b]8;;http://evil\x07click\x1b]8;;\x07 \x1b[2J"
    report = ImagesReport(
        matrix="m.toml",
        checked_at="2026-01-01T00:00:00Z",
        seconds=0.5,
        checks=(
            ImageCheck("db", "db", "arm64", Availability("x:1", "arm64", Verdict.MISSING, "r", detail=hostile)),
            ImageCheck(
                "db",
                "db",
                "amd64",
                Availability(
                    "x:1",
                    "amd64",
                    Verdict.AVAILABLE,
                    "r",
                    digest="sha256:" + "b" * 64,
                    size=1_234_567,
                    found_as="index",
                ),
            ),
        ),
        registries=(RegistryStatus("r", requests=3, limit=100, remaining=97, window_s=21600, source="ip"),),
    )
    table = render_table(report, 200)  # wide: every column (test_table_widths: narrow)
    assert "\x1b" not in table and "\x07" not in table
    rows = [line.split() for line in table.splitlines()]
    assert ["db", "amd64", "available", "1.2", "MiB", "sha256:bbbbbbbbbbbb", "index"] in rows
    assert ["db", "arm64", "missing", "click"] in rows
    assert "registry r: 3 requests, rate limit 100 per 6 h, 97 remaining (counted by ip)" in table
    data = json.loads(render_json(report))
    assert data["summary"] == {"available": 1, "missing": 1}
    assert data["checks"][0]["detail"] == hostile  # JSON escapes it; consumers decide
    assert data["registries"][0]["rate_limit"]["remaining"] == 97
