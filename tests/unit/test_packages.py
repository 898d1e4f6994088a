"""The packaging verdicts against the registries' real metadata formats: answers recorded
from PyPI, npm, Maven Central and the Go module proxy (tests/data/packages/), served by an
httpx mock transport; the archives looked into (an sdist, jars, module zips, tarballs) are
made here, so each verdict's reason is in the test. The real registries are asked in
tests/integration/test_package_registries.py."""

from __future__ import annotations

import asyncio
import io
import json
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from ecoready.domain.drivers import parse_driver
from ecoready.domain.errors import MatrixMismatch, RegistryError
from ecoready.domain.packaging import Packaging, PackagingVerdict
from ecoready.packages import archives
from ecoready.packages.client import PackageClient
from ecoready.packages.npm import NpmVersion, fits
from ecoready.packages.pypi import sort_wheels, wheel_tags

DATA = Path(__file__).resolve().parents[1] / "data" / "packages"
Handler = Callable[[httpx.Request], httpx.Response]


def tgz(files: dict[str, bytes], top: str = "pkg-1.0") -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, content in files.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return out.getvalue()


def zipped(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()


MYSQLCLIENT_SDIST = tgz(
    {
        "setup.py": b'def get_config():\n    cmd = f"pkg-config --exists {pkg}"  # mysqlclient, mariadb\n',
        "src/MySQLdb/_mysql.c": b"#include <mysql.h>\n",
        "src/MySQLdb/__init__.py": b"",
        "tests/test_x.c": b"",
    },
    "mysqlclient-2.2.8",
)
# MariaDB Connector/Python's layout: setup.py names no tool; its site.cfg and its helper
# module (mariadb_posix.py) name mariadb_config
MARIADB_SDIST = tgz(
    {
        "setup.py": b"from mariadb_posix import get_config\nc.read(['site.cfg'])\n",
        "site.cfg": b"[cc_options]\nlink_static=default\nmariadb_config=/usr/local/bin/mariadb_config\n",
        "mariadb_posix.py": b'def mariadb_config(config, option):\n    file = popen("%s --%s" % (config, option))\n',
        "mariadb/mariadb.c": b"#include <mysql.h>\n",
        "mariadb/__init__.py": b"",
        "testing/test/base_test.py": b"",
    },
    "mariadb-1.1.14",
)


def assess(handler: Handler, spec: str, arch: str) -> Packaging:
    async def go() -> Packaging:
        async with PackageClient(transport=httpx.MockTransport(handler)) as client:
            return await client.assess(parse_driver(spec), arch)

    return asyncio.run(go())


def recorded(extra: dict[str, bytes] | None = None) -> Handler:
    """The recorded registry answers, plus archives by the end of their path."""
    files = {
        "/pypi/mysqlclient/json": (DATA / "pypi-mysqlclient.json").read_bytes(),
        "/pypi/PyMySQL/json": (DATA / "pypi-pymysql.json").read_bytes(),
        "/pypi/mysql-connector-python/json": (DATA / "pypi-mysql-connector-python.json").read_bytes(),
        "/mysql2": (DATA / "npm-mysql2.json").read_bytes(),
        "/maven2/com/mysql/mysql-connector-j/maven-metadata.xml": (
            DATA / "maven-mysql-connector-j-metadata.xml"
        ).read_bytes(),
        "/maven2/com/mysql/mysql-connector-j/9.7.0/mysql-connector-j-9.7.0.pom": (
            DATA / "maven-mysql-connector-j-9.7.0.pom"
        ).read_bytes(),
        "/github.com/go-sql-driver/mysql/@v/list": (DATA / "go-sql-driver-mysql-list.txt").read_bytes(),
        "/github.com/go-sql-driver/mysql/@v/v1.9.3.mod": (DATA / "go-sql-driver-mysql-v1.9.3.mod").read_bytes(),
        # an exact version is asked as `go get` asks it (the proxy's answer, 2026-11-27)
        "/github.com/go-sql-driver/mysql/@v/v1.9.3.info": b'{"Version": "v1.9.3", "Time": "2025-06-13T06:20:32Z"}',
        "mysqlclient-2.2.8.tar.gz": MYSQLCLIENT_SDIST,
        "/pypi/mariadb/json": (DATA / "pypi-mariadb.json").read_bytes(),
        "mariadb-1.1.14.tar.gz": MARIADB_SDIST,
        **(extra or {}),
    }

    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        for key, body in files.items():
            if path == key or (not key.startswith("/") and path.endswith(key)):
                return httpx.Response(200, content=body)
        return httpx.Response(404)

    return handle


# -- PyPI ------------------------------------------------------------------------------------
def test_mysqlclient_has_no_linux_wheel_and_its_sdist_says_what_a_build_needs() -> None:
    for arch, machine in (("arm64", "aarch64"), ("amd64", "x86_64")):
        p = assess(recorded(), "pypi:mysqlclient==2.2.*", arch)
        assert (p.version, p.verdict, p.artifact) == ("2.2.8", PackagingVerdict.SOURCE, "")
        assert p.needs == ("gcc", "python3-dev", "pkg-config", "libmariadb-dev")
        assert f"no {machine} wheel (wheels only for win_amd64)" in p.detail
        assert "mysqlclient-2.2.8.tar.gz has native sources (src/MySQLdb/_mysql.c)" in p.detail


def test_mariadb_connector_python_builds_from_its_sdist_against_the_client_library() -> None:
    for arch, machine in (("arm64", "aarch64"), ("amd64", "x86_64")):
        p = assess(recorded(), "pypi:mariadb==1.1.*", arch)
        assert (p.version, p.verdict, p.artifact) == ("1.1.14", PackagingVerdict.SOURCE, "")
        assert p.needs == ("gcc", "python3-dev", "libmariadb-dev")  # mariadb_config, not pkg-config
        assert f"no {machine} wheel (wheels only for win32, win_amd64)" in p.detail, p.detail
    facts = archives.sdist_facts(MARIADB_SDIST, "mariadb-1.1.14.tar.gz")
    assert facts.native == ("mariadb/mariadb.c",) and "mariadb_config" in facts.tools


def test_a_wheel_for_the_arch_is_ready_and_names_its_platform() -> None:
    p = assess(recorded(), "pypi:mysql-connector-python", "arm64")
    assert (p.version, p.verdict, p.artifact) == ("26.10.0", PackagingVerdict.READY, "wheel")
    assert p.detail.startswith("manylinux_2_28_aarch64 wheels for cp310, cp311")
    assert "x86_64" in assess(recorded(), "pypi:mysql-connector-python", "amd64").detail


def test_a_pure_python_wheel_is_ready_everywhere_and_the_name_may_differ_in_case() -> None:
    p = assess(recorded(), "pypi:PyMySQL", "arm64")
    assert (p.version, p.artifact, p.detail) == ("1.2.4", "pure-Python wheel", "pymysql-1.2.4-py3-none-any.whl")


def test_prereleases_only_when_the_pin_names_one() -> None:
    old = recorded({"mysqlclient-1.4.6.tar.gz": MYSQLCLIENT_SDIST})
    assert assess(old, "pypi:mysqlclient<2.2.1", "amd64").version == "1.4.6"
    rc = recorded({"mysqlclient-2.2.0rc1.tar.gz": MYSQLCLIENT_SDIST})
    assert assess(rc, "pypi:mysqlclient==2.2.0rc1", "amd64").version == "2.2.0rc1"


def test_a_version_that_does_not_exist_is_a_configuration_error() -> None:
    with pytest.raises(MatrixMismatch, match=r"PyPI has no release of mysqlclient matching it \(newest: 2.3.1\)"):
        assess(recorded(), "pypi:mysqlclient==9.9.*", "arm64")
    with pytest.raises(MatrixMismatch, match="PyPI has no project 'no-such-driver'"):
        assess(recorded(), "pypi:no-such-driver", "arm64")


def test_a_registry_that_cannot_answer_is_an_infrastructure_error_never_missing() -> None:
    with pytest.raises(RegistryError, match="HTTP 500"):
        assess(lambda r: httpx.Response(500), "pypi:PyMySQL", "arm64")
    with pytest.raises(RegistryError, match="unreachable"):
        assess(lambda r: (_ for _ in ()).throw(httpx.ConnectError("no route")), "npm:mysql2", "arm64")


def test_no_wheel_for_the_arch_and_no_sdist_is_missing() -> None:
    document = {
        "releases": {
            "1.0": [
                {"filename": "x-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "packagetype": "bdist_wheel", "url": "a"},
                {"filename": "x-1.0-cp311-cp311-musllinux_1_1_aarch64.whl", "packagetype": "bdist_wheel", "url": "b"},
            ]
        }
    }
    p = assess(recorded({"/pypi/x/json": json.dumps(document).encode()}), "pypi:x", "arm64")
    assert p.verdict is PackagingVerdict.MISSING
    assert p.detail == (
        "no aarch64 wheel and no source distribution; only musllinux aarch64 wheels (musl images only); "
        "wheels only for manylinux_2_17_x86_64"
    )
    assert assess(recorded({"/pypi/x/json": json.dumps(document).encode()}), "pypi:x", "amd64").artifact == "wheel"


def test_wheel_file_names_are_read_as_pep_427_says() -> None:
    assert wheel_tags("mysqlclient-2.2.8-cp311-cp311-win_amd64.whl") == ("cp311", "cp311", ("win_amd64",))
    name = "numpy-2.0-1-cp312-cp312-manylinux_2_17_aarch64.manylinux2014_aarch64.whl"  # a build tag, two platforms
    assert wheel_tags(name) == ("cp312", "cp312", ("manylinux_2_17_aarch64", "manylinux2014_aarch64"))
    assert wheel_tags("x-1.0.tar.gz") is None


# -- npm -------------------------------------------------------------------------------------
def leaf(name: str, version: str = "1.0.0", **more: object) -> bytes:
    doc = {"name": name, "version": version, "dist": {"tarball": f"https://registry.example/{name}.tgz"}, **more}
    return json.dumps({"dist-tags": {"latest": version}, "versions": {version: doc}}).encode()


def mysql2_world(**overrides: bytes) -> Handler:
    doc = json.loads((DATA / "npm-mysql2.json").read_text())
    deps = doc["versions"]["3.24.6"]["dependencies"]
    # each dependency published once, at the lowest version its range takes
    docs = {f"/{name.replace('/', '%2F')}": leaf(name, rng.lstrip("^~>= ")) for name, rng in deps.items()}
    return recorded({**docs, **overrides})


def test_mysql2_is_pure_js_with_its_dependencies_and_canaries_are_not_picked() -> None:
    p = assess(mysql2_world(), "npm:mysql2@3", "arm64")
    assert (p.version, p.verdict, p.artifact) == ("3.24.6", PackagingVerdict.READY, "pure JS")
    assert p.detail.startswith("mysql2 3.24.6 and 7 dependencies: no install script")
    assert assess(mysql2_world(), "npm:mysql2", "amd64").version == "3.24.6"  # the latest dist-tag
    assert assess(mysql2_world(), "npm:mysql2@^2", "amd64").version == "2.3.3"
    with pytest.raises(MatrixMismatch, match="npm has no version of mysql2 matching it"):
        assess(mysql2_world(), "npm:mysql2@9", "amd64")


def test_an_addon_is_prebuilt_when_its_tarball_has_the_arch_else_node_gyp_compiles_it() -> None:
    addon = leaf("addon", scripts={"install": "node-gyp-build"}, dependencies={"node-gyp-build": "^4"})
    prebuilt = tgz({"binding.gyp": b"{}", "prebuilds/linux-arm64/addon.node": b"\x7fELF"}, "package")
    world = recorded({"/addon": addon, "/node-gyp-build": leaf("node-gyp-build", "4.8.4"), "addon.tgz": prebuilt})
    arm = assess(world, "npm:addon", "arm64")
    assert (arm.verdict, arm.artifact) == (PackagingVerdict.READY, "prebuilt linux-arm64 binary")
    amd = assess(world, "npm:addon", "amd64")
    assert (amd.verdict, amd.needs) == (PackagingVerdict.SOURCE, ("python3", "make", "g++"))
    assert "may download a prebuilt binary from outside the registry" in amd.detail


def test_a_package_for_another_cpu_is_missing_and_optional_ones_for_it_are_skipped() -> None:
    only_x64 = leaf("fast", cpu=["x64"])
    assert assess(recorded({"/fast": only_x64}), "npm:fast", "arm64").verdict is PackagingVerdict.MISSING
    root = leaf("app", optionalDependencies={"fast": "^1"})
    p = assess(recorded({"/app": root, "/fast": only_x64}), "npm:app", "arm64")
    assert (p.artifact, p.detail.split(":")[0]) == ("pure JS", "app 1.0.0 and 0 dependencies")


def test_npm_cpu_and_os_fields_as_npm_reads_them() -> None:
    def pkg(cpu: tuple[str, ...] = (), os: tuple[str, ...] = ()) -> NpmVersion:
        return NpmVersion("p", "1.0.0", {}, frozenset(), False, cpu, os, "")

    assert fits(pkg(), "arm64") and fits(pkg(("arm64", "x64")), "arm64") and fits(pkg(("!s390x",)), "arm64")
    assert not fits(pkg(("x64",)), "arm64") and not fits(pkg(("!arm64",)), "arm64")
    assert not fits(pkg(os=("darwin",)), "amd64") and fits(pkg(os=("!win32",)), "amd64")


# -- Maven Central ---------------------------------------------------------------------------
PURE_JAR = zipped({"META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\n", "com/mysql/cj/jdbc/Driver.class": b"\xca\xfe"})


def test_connector_j_resolves_from_the_metadata_and_its_jars_are_bytecode_only() -> None:
    world = recorded({"mysql-connector-j-9.7.0.jar": PURE_JAR, "protobuf-java-4.31.1.jar": PURE_JAR})
    p = assess(world, "maven:com.mysql:mysql-connector-j:9.*", "arm64")
    assert (p.version, p.verdict, p.artifact) == ("9.7.0", PackagingVerdict.READY, "pure-Java jar")
    # its POM's one non-optional dependency is looked into too; the optional OCI SDK is not
    assert p.detail == "mysql-connector-j-9.7.0.jar, protobuf-java-4.31.1.jar: bytecode only"
    with pytest.raises(MatrixMismatch, match=r"Maven Central has no version .* \(newest: 26.10.0\)"):
        assess(world, "maven:com.mysql:mysql-connector-j:10.*", "arm64")


def test_a_jar_with_natives_for_another_arch_says_so() -> None:
    natives = zipped({"native/linux-x86_64/libx.so": b"\x7fELF", "native/win-x64/x.dll": b"MZ"})
    world = recorded({"mysql-connector-j-9.7.0.jar": natives, "protobuf-java-4.31.1.jar": PURE_JAR})
    arm = assess(world, "maven:com.mysql:mysql-connector-j:9.7.0", "arm64")
    assert arm.artifact == "jar" and arm.detail.startswith("native libraries but none for linux-aarch64")
    amd = assess(world, "maven:com.mysql:mysql-connector-j:9.7.0", "amd64")
    assert amd.artifact == "jar with linux-x86_64 natives"


def test_an_xml_answer_with_a_dtd_is_refused() -> None:
    evil = b'<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaa">]><metadata>&a;</metadata>'
    world = recorded({"/maven2/com/mysql/mysql-connector-j/maven-metadata.xml": evil})
    with pytest.raises(RegistryError, match="with a DTD"):
        assess(world, "maven:com.mysql:mysql-connector-j", "arm64")


# -- the Go module proxy ---------------------------------------------------------------------
GO_FILES = {
    "github.com/go-sql-driver/mysql@v1.9.3/connector.go": b'package mysql\n\nimport (\n\t"context"\n)\n',
    "github.com/go-sql-driver/mysql@v1.9.3/driver_test.go": b'package mysql\n\nimport "C"\n',
}


def go_world(driver: dict[str, bytes]) -> Handler:
    edwards = zipped({"filippo.io/edwards25519@v1.1.0/scalar.go": b"package edwards25519\n"})
    return recorded({"mysql/@v/v1.9.3.zip": zipped(driver), "edwards25519/@v/v1.1.0.zip": edwards})


def test_go_sql_driver_is_pure_go_and_says_which_go_it_needs() -> None:
    p = assess(go_world(GO_FILES), "go:github.com/go-sql-driver/mysql@v1.9", "arm64")
    assert (p.version, p.verdict, p.artifact) == ("v1.9.3", PackagingVerdict.READY, "pure Go")
    assert p.detail == (
        "no cgo in github.com/go-sql-driver/mysql v1.9.3, filippo.io/edwards25519 v1.1.0; needs Go >= 1.21.0"
    )  # a cgo import in a _test.go file does not count


def test_cgo_needs_a_c_compiler_and_a_missing_version_is_a_configuration_error() -> None:
    cgo = {**GO_FILES, "github.com/go-sql-driver/mysql@v1.9.3/native.go": b'package mysql\n\nimport (\n\t"C"\n)\n'}
    p = assess(go_world(cgo), "go:github.com/go-sql-driver/mysql@v1.9.3", "arm64")
    assert (p.verdict, p.needs) == (PackagingVerdict.SOURCE, ("gcc",))
    assert "cgo in github.com/go-sql-driver/mysql v1.9.3 (native.go)" in p.detail
    with pytest.raises(MatrixMismatch, match=r"no version of github.com/go-sql-driver/mysql matching it"):
        assess(go_world(GO_FILES), "go:github.com/go-sql-driver/mysql@v1.99", "arm64")


# -- archives --------------------------------------------------------------------------------
def test_an_archive_is_read_within_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archives, "MAX_TOTAL", 1000)
    big = tgz({"a.c": b"x" * 600, "b.c": b"x" * 600})
    facts = archives.sdist_facts(big, "x.tar.gz")
    assert facts.native == ("a.c",) and facts.complete is False
    assert archives.sdist_facts(b"not an archive", "x.tar.gz") == archives.SourceFacts(complete=False)
    assert archives.native_libraries(b"PK\x03\x04 broken") == ([], False)


def test_sdist_facts_see_native_sources_outside_tests_and_the_tools_the_build_names() -> None:
    facts = archives.sdist_facts(MYSQLCLIENT_SDIST, "mysqlclient-2.2.8.tar.gz")
    assert facts.native == ("src/MySQLdb/_mysql.c",)
    assert {"pkg-config", "mysqlclient"} <= facts.tools and facts.complete
    assert sort_wheels([], "arm64").fitting == ()
