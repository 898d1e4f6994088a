"""The packaging verdicts against the real registries (PyPI, npm, Maven Central, the Go
module proxy, reachable from these machines over HTTPS), each checked against the
registry's own file list asked separately, by another of its APIs where it has one: the
verdict must name a version the registry publishes and an artifact it really lists."""

from __future__ import annotations

import asyncio
import hashlib
import io
import re
import ssl
import zipfile

import httpx
import pytest

from ecoready.domain.drivers import parse_driver
from ecoready.domain.errors import MatrixMismatch
from ecoready.domain.packaging import Packaging, PackagingVerdict
from ecoready.packages.client import PackageClient


def assess(spec: str, arch: str) -> Packaging:
    async def go() -> Packaging:
        async with PackageClient() as client:
            return await client.assess(parse_driver(spec), arch)

    return asyncio.run(go())


def get(url: str, accept: str = "") -> httpx.Response:
    headers = {"Accept": accept} if accept else {}
    response = httpx.get(url, headers=headers, timeout=30, follow_redirects=True, verify=ssl.create_default_context())
    response.raise_for_status()
    return response


def test_pypi_wheels_and_source_builds_are_what_pypi_lists() -> None:
    # PEP 691's simple API: the index pip itself reads, not the JSON API the verdict used
    def files(project: str, version: str) -> list[str]:
        listed = get(f"https://pypi.org/simple/{project}/", "application/vnd.pypi.simple.v1+json").json()["files"]
        normalized = project.replace("-", "_").lower()
        return [f["filename"] for f in listed if f["filename"].lower().startswith(f"{normalized}-{version}")]

    wheel = assess("pypi:mysql-connector-python", "arm64")
    assert (wheel.verdict, wheel.artifact) == (PackagingVerdict.READY, "wheel")
    listed = files("mysql-connector-python", wheel.version)
    platform = wheel.detail.split()[0]  # manylinux_2_28_aarch64
    assert platform.endswith("_aarch64") and any(name.endswith(f"-{platform}.whl") for name in listed), listed

    source = assess("pypi:mysqlclient==2.2.*", "arm64")
    assert source.verdict is PackagingVerdict.SOURCE and "gcc" in source.needs
    listed = files("mysqlclient", source.version)
    assert f"mysqlclient-{source.version}.tar.gz" in listed
    assert not [name for name in listed if re.search(r"(manylinux|musllinux|linux)_[^-]*aarch64", name)], listed

    with pytest.raises(MatrixMismatch, match="no release of mysqlclient matching it"):
        assess("pypi:mysqlclient==0.0.1", "arm64")


def test_npm_mysql2_is_pure_js_as_its_full_document_says() -> None:
    found = assess("npm:mysql2@3", "arm64")
    assert (found.verdict, found.artifact) == (PackagingVerdict.READY, "pure JS")
    # the full document (not the abbreviated one the verdict read): no install step at all
    doc = get("https://registry.npmjs.org/mysql2", "application/json").json()
    assert found.version.startswith("3.") and found.version in doc["versions"]
    version = doc["versions"][found.version]
    scripts = version.get("scripts") or {}
    assert not any(scripts.get(k) for k in ("preinstall", "install", "postinstall")) and not version.get("gypfile")
    assert version["dist"]["tarball"].endswith(f"mysql2-{found.version}.tgz")


def test_maven_connector_j_is_a_pure_java_jar_central_lists() -> None:
    found = assess("maven:com.mysql:mysql-connector-j:9.*", "arm64")
    assert (found.verdict, found.artifact) == (PackagingVerdict.READY, "pure-Java jar")
    assert found.detail.startswith(f"mysql-connector-j-{found.version}.jar")
    # Central's own records, through its other front (repo.maven.apache.org; it serves no
    # directory listings here): the version in its metadata, the jar with the checksum
    # Central publishes for it, and in that jar no native library
    base = "https://repo.maven.apache.org/maven2/com/mysql/mysql-connector-j"
    versions = re.findall(r"<version>([^<]+)</version>", get(f"{base}/maven-metadata.xml").text)
    newest = max((v for v in versions if re.fullmatch(r"9\.\d+\.\d+", v)), key=lambda v: int(v.split(".")[1]))
    assert found.version == newest
    jar = get(f"{base}/{newest}/mysql-connector-j-{newest}.jar").content
    assert hashlib.sha1(jar).hexdigest() == get(f"{base}/{newest}/mysql-connector-j-{newest}.jar.sha1").text.split()[0]
    with zipfile.ZipFile(io.BytesIO(jar)) as archive:
        assert archive.namelist() and not [n for n in archive.namelist() if n.endswith((".so", ".dll", ".dylib"))]


def test_go_sql_driver_is_pure_go_at_a_version_the_proxy_lists() -> None:
    found = assess("go:github.com/go-sql-driver/mysql@v1.9", "arm64")
    assert (found.verdict, found.artifact) == (PackagingVerdict.READY, "pure Go")
    listed = get("https://proxy.golang.org/github.com/go-sql-driver/mysql/@v/list").text.split()
    newest = max((v for v in listed if v.startswith("v1.9.")), key=lambda v: int(v.split(".")[2]))
    assert found.version == newest
    assert get(f"https://proxy.golang.org/github.com/go-sql-driver/mysql/@v/{newest}.info").json()["Version"] == newest
