"""The gh-ost probe: its build script, what it reads of gh-ost's output, who is blamed when
the build fails, and its flow against a fake engine (the real one: tests/integration/
test_stand_in_ghost.py)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from ecoready.domain.drivers import parse_driver
from ecoready.domain.errors import ConfigError, InfraError, MatrixMismatch, RegistryError, StageFailed
from ecoready.domain.model import Category, HostFacts
from ecoready.domain.packaging import InstallKind, Packaging, PackagingVerdict
from ecoready.matrix.load import load
from ecoready.packages.client import PackageClient
from ecoready.probe_api import step_of
from ecoready.probes.ghost import (
    AFTER,
    BIN,
    CHECKSUM,
    CONF,
    ROWS,
    SEED,
    STAGED,
    GhostProbe,
    conf_file,
    ghost_command,
    install_script,
    outcome,
    place_script,
)
from tests.support.fake_host import FakeContainer, Sql, component, context, failed, ok, rig

MYSQL97 = component("mysql-9.7", "server", "mysql:9.7")
GHOST = component(
    "gh-ost",
    "ghost",
    "golang:1.27",
    category=Category.TOOLKIT,
    backend="mysql-9.7",
    options={"install": "go:github.com/github/gh-ost@v1.1.8"},
)
RESOLVED = Packaging(
    "go:github.com/github/gh-ost@v1.1.8", "go", "github.com/github/gh-ost", "v1.1.8", "amd64", PackagingVerdict.SOURCE
)
# gh-ost v1.1.8 --verbose's last lines after a migration, as it printed them here against the
# stand-in's MySQL 9.7 (2026-11-27), and its refusal of a MINIMAL binlog_row_image
DONE = (
    "2026-11-27 23:55:27 INFO Dropping table `ecoready_ghost`.`_t_ghk`\n"
    "2026-11-27 23:55:27 INFO Table dropped\n"
    "2026-11-27 23:55:27 INFO Done migrating `ecoready_ghost`.`t`\n"
    "2026-11-27 23:55:27 INFO Removing socket file: /tmp/gh-ost.ecoready_ghost.t.sock\n"
    "2026-11-27 23:55:27 INFO Tearing down inspector\n"
)
MINIMAL = (
    "2026-11-27 23:55:32 INFO User has SUPER, REPLICATION SLAVE privileges, and has ALL privileges on "
    "`ecoready_ghost`.*\n"
    "2026-11-27 23:55:32 INFO Tearing down inspector\n"
    "2026-11-27 23:55:32 FATAL ghost-measure-mysql:3306 has 'MINIMAL' binlog_row_image, and only 'FULL' is "
    "supported. This operation cannot proceed. You may `set global binlog_row_image='full'` and try again\n"
)


def test_a_migration_is_done_only_when_gh_ost_says_so_and_exits_0() -> None:
    assert outcome("# Migrating `ecoready_ghost`.`t`\nCopy: 3000/3000 100.0%\n", DONE, 0).done
    assert not outcome("", DONE, 1).done
    stopped = outcome("", "2026-11-27 INFO Inspector initiated\n", 0)
    assert not stopped.done and stopped.why.startswith("no `Done migrating`: ")


def test_a_failed_migration_is_said_in_gh_ost_s_own_words() -> None:
    said = outcome("", MINIMAL, 1)
    assert not said.done and said.why.startswith("exit 1: 2026-11-27 23:55:32 FATAL ghost-measure-mysql:3306 has ")
    assert said.why.endswith("only 'FULL' is supported. This operation cannot proceed. You may `set global "
                             "binlog_row_image='full'` and try again")  # fmt: skip
    # without a FATAL line, its last ERROR line; else its last words
    error = outcome("", "2026-11-27 ERROR Error 1045: Access denied\n2026-11-27 INFO Tearing down\n", 1)
    assert error.why == "exit 1: 2026-11-27 ERROR Error 1045: Access denied"
    assert outcome("", "", 2).why == "exit 2: no output"


def test_the_build_is_go_get_of_the_exact_release_then_go_build_and_says_which_step_failed() -> None:
    script = install_script("github.com/github/gh-ost", "v1.1.8", "arm64")
    assert "go get github.com/github/gh-ost/go/cmd/gh-ost@v1.1.8 &&" in script
    # for the cell's arch, as gh-ost's build.sh builds its release binaries: GOOS and GOARCH set
    assert script.index("export GOOS=linux GOARCH=arm64 &&") < script.index("go build")
    assert "ecoready-label: goarch=$(go version -m /opt/ecoready/bin/gh-ost" in script
    assert f"go build -trimpath -ldflags='-s -w' -o {BIN} github.com/github/gh-ost/go/cmd/gh-ost &&" in script
    assert "go install" not in script  # it asks the proxy for the version list: see the module's docstring
    assert (
        script.index("command -v go") < script.index("ecoready-step: download") < script.index("ecoready-step: build")
    )
    assert step_of("go: creating new go.mod\necoready-step: download\n") == "download"
    assert step_of("ecoready-step: download\necoready-step: build\n") == "build"
    assert step_of("") == ""


def test_the_binary_is_put_into_the_cell_s_image_and_says_there_what_it_is_and_where_it_runs() -> None:
    script = place_script("github.com/github/gh-ost")
    assert f"install -D -m 0755 {STAGED} {BIN} &&\nrm -f {STAGED} &&" in script
    for fact in ("version=$(go version -m", "goarch=$(go version -m", "machine=$(uname -m)"):
        assert f"ecoready-label: {fact}" in script


def test_credentials_are_in_the_option_file_never_on_the_command_line() -> None:
    assert conf_file("root", "s3cretXYZ") == b"[client]\nuser = `root`\npassword = `s3cretXYZ`\n"
    argv = ghost_command("backend-server", 3306)
    assert f"--conf={CONF}" in argv and "--allow-on-master" in argv and "--execute" in argv
    assert not any(a.startswith(("--password", "--user")) for a in argv)


def test_the_row_pins_one_release_of_gh_ost_s_module(tmp_path: Path) -> None:
    def problems(install: str) -> str:
        text = (
            'title = "t"\n[[components]]\nid = "db"\nname = "db"\ncategory = "server"\nprobe = "server"\n'
            'image = "mysql:9.7"\n[[components]]\nid = "g"\nname = "g"\ncategory = "toolkit"\nprobe = "ghost"\n'
            f'image = "golang:1.27"\nbackend = "db"\noptions = {{ install = "{install}" }}\n'
        )
        path = tmp_path / "m.toml"
        path.write_text(text)
        try:
            load(path, {})
        except ConfigError as exc:
            return str(exc)
        return ""

    assert problems("go:github.com/github/gh-ost@v1.1.8") == ""
    assert "pin one release" in problems("go:github.com/github/gh-ost@v1.1")
    assert "this probe builds github.com/github/gh-ost from go:" in problems("go:github.com/openark/gh-ost@v1.1.8")
    assert "this probe builds" in problems("pypi:gh-ost")


def proxy(requests: list[str]) -> httpx.MockTransport:
    info = b'{"Version":"v1.1.8","Time":"2026-03-09T17:05:30Z"}'
    mod = b"module github.com/github/gh-ost\n\ngo 1.23.0\n\nrequire github.com/go-sql-driver/mysql v1.8.1\n"

    def handle(request: httpx.Request) -> httpx.Response:
        requests.append(request.url.path)
        if request.url.path == "/github.com/github/gh-ost/@v/v1.1.8.info":
            return httpx.Response(200, content=info)
        if request.url.path == "/github.com/github/gh-ost/@v/v1.1.8.mod":
            return httpx.Response(200, content=mod)
        if request.url.path.endswith(".info"):
            return httpx.Response(404, content=b"not found: unknown revision")
        return httpx.Response(403, content=b"This module version is not available.")  # the list, as here

    return httpx.MockTransport(handle)


async def test_a_program_s_exact_release_is_asked_without_the_list_and_is_a_source_build() -> None:
    requests: list[str] = []
    async with PackageClient(transport=proxy(requests)) as client:
        spec = parse_driver("go:github.com/github/gh-ost@v1.1.8")
        found = await client.assess(spec, "arm64", program=True)
        assert (found.version, found.verdict) == ("v1.1.8", PackagingVerdict.SOURCE)
        assert (
            found.detail == "the Go module proxy serves source: built with go build, CGO_ENABLED=0; needs Go >= 1.23.0"
        )
        # a driver's judgement reads its requirements' zips (refused here): an error, not a verdict
        with pytest.raises(RegistryError, match="HTTP 403"):
            await client.assess(spec, "arm64")
        with pytest.raises(MatrixMismatch, match=r"no version v1\.1\.7 of github\.com/github/gh-ost"):
            await client.assess(parse_driver("go:github.com/github/gh-ost@v1.1.7"), "arm64", program=True)
    assert not any(path.endswith("/list") for path in requests)
    assert not any(path.endswith(".zip") for path in requests[:2])


BINARY = b"\x7fELF gh-ost v1.1.8"


def built(goarch: str = "amd64", version: str = "v1.1.8") -> Any:
    return ok(
        "ecoready-step: download\necoready-step: build\n"
        f"ecoready-label: version={version}\necoready-label: goarch={goarch}\necoready-label: go=go1.27.3\n"
    )


def placed(goarch: str = "amd64", machine: str = "x86_64", version: str = "v1.1.8") -> Any:
    return ok(
        f"ecoready-label: version={version}\necoready-label: goarch={goarch}\necoready-label: machine={machine}\n"
    )


def engine(r: Any, *, install: Any = None, place: Any = None, migration: Any = None) -> dict[str, Any]:
    """A fake MySQL 9.7 backend and gh-ost container; `seen` gathers what the probe did."""
    seen: dict[str, Any] = {"sql": []}
    r.host.images.readable[BIN] = BINARY  # what the build leaves in its image

    @r.host.sql
    def server(call: Sql) -> list[dict[str, object]] | None:
        if call.via.role != "backend-server":
            return None
        seen["sql"].append(call.statement)
        if call.statement in ("SELECT 1 AS ok", SEED) or call.statement.startswith("SET GLOBAL"):
            return [{"ok": 1}] if call.statement == "SELECT 1 AS ok" else []
        if call.statement == "SELECT CURRENT_USER() AS me":
            return [{"me": "root@%"}]
        if call.statement == CHECKSUM:
            return [{"n": str(ROWS), "sum": "123456"}]
        if call.statement == AFTER:
            return [seen.get("after", {"altered": str(ROWS), "has_column": "1", "leftovers": ""})]
        return None

    @r.host.execs_to
    def execs(container: FakeContainer, argv: list[str]) -> Any:
        if argv[0] == "timeout" and "go build" in argv[-1]:  # the build's installer
            seen.setdefault("timeouts", []).append(argv[3])
            return install or built()
        if argv[0] == "timeout" and STAGED in argv[-1]:  # the binary put into the cell's image
            seen["staged"] = container.files.get(STAGED)
            seen.setdefault("timeouts", []).append(argv[3])
            return place or placed()
        if container.role == "gh-ost" and argv == [BIN, "--version"]:
            return ok("unversioned (git commit: unknown)\n")
        if container.role == "gh-ost" and argv[0] == BIN:
            seen["argv"] = argv
            return migration or ok("Copy: 3000/3000 100.0%\n", DONE)
        return None

    return seen


async def test_gh_ost_is_built_then_migrates_a_table_and_the_verdict_says_how_it_was_installed() -> None:
    r = rig()
    seen = engine(r)
    ctx = context(r, GHOST, MYSQL97)
    ctx.packaging = RESOLVED
    probe = GhostProbe(ctx)
    await probe.start()
    await probe.smoke()
    (check,) = r.checks().values()
    assert check.outcome.value == "pass", check.detail
    assert check.detail.startswith(f"t: {ROWS} rows migrated online (ADD COLUMN added_online)")
    assert ctx.packaging is not None and ctx.packaging.verdict is PackagingVerdict.READY
    assert ctx.packaging.install_kind is InstallKind.BUILT
    assert ctx.packaging.install.startswith(
        "built on amd64 with go build (go1.27.3), as gh-ost's release binaries are, in "
    ), ctx.packaging.install
    assert ctx.packaging.install.endswith(", from the Go module proxy: GitHub publishes no gh-ost image")
    # one path: built (native here), read out of the build's image, put into the row's image
    assert seen["staged"] == BINARY and seen["timeouts"] == ["840", "60"]
    (build, place) = (image_id for image_id, _ in r.host.images.committed.values())
    assert r.host.images.read == [(build, BIN)]
    tool = r.host.by_role("gh-ost")
    assert tool.spec.image == place != build
    password = r.host.by_role("backend-server").files["/run/ecoready/root-password"].decode()
    assert tool.files[CONF] == conf_file("root", password)
    assert all(password not in " ".join(argv) for _, argv in r.host.execs)
    # root logged in over TLS before gh-ost; the table was seeded and checksummed first
    statements = seen["sql"]
    assert statements.index(SEED) < statements.index(CHECKSUM) < statements.index("SELECT CURRENT_USER() AS me")
    assert seen["argv"][1:4] == [f"--conf={CONF}", "--host=backend-server", "--port=3306"]


async def test_an_emulated_cell_s_gh_ost_is_cross_compiled_natively_and_runs_in_the_cell_s_arch() -> None:
    r = rig()
    r.run.hosts = {"fake": HostFacts("fake", "amd64", ("arm64",))}
    seen = engine(r, install=built("arm64"), place=placed("arm64", "aarch64"))
    ctx = context(r, GHOST, MYSQL97, arch="arm64", emulated=True)
    ctx.packaging = replace(RESOLVED, arch="arm64")
    probe = GhostProbe(ctx)
    await probe.start()
    await probe.smoke()
    (check,) = r.checks().values()
    assert check.outcome.value == "pass", check.detail
    assert ctx.packaging.install.startswith(
        "cross-compiled on amd64 for arm64 with go build (go1.27.3), as gh-ost's release binaries are, in "
    ), ctx.packaging.install
    # the build: the row's image for amd64, a GOARCH=arm64 script, native time, no QEMU_CPU
    assert ("golang:1.27", "amd64") in r.images.asked and ("golang:1.27", "arm64") in r.images.asked
    installs = [
        (argv, env) for (_, argv), env in zip(r.host.execs, r.host.exec_envs, strict=True) if argv[0] == "timeout"
    ]
    (build_argv, build_env), (place_argv, place_env) = installs
    assert "GOARCH=arm64" in build_argv[-1] and "QEMU_CPU" not in build_env
    assert STAGED in place_argv[-1] and place_env["QEMU_CPU"] == ctx.extra_env["QEMU_CPU"]
    assert seen["timeouts"] == ["840", "360"]  # the build is native; putting it in is emulated (60 s x 6)
    assert seen["staged"] == BINARY


async def test_a_row_image_without_the_engine_s_native_arch_is_not_gh_ost_s_missing() -> None:
    r = rig(missing=["golang:1.27"])
    r.run.hosts = {"fake": HostFacts("fake", "amd64", ("arm64",))}
    engine(r)
    ctx = context(r, GHOST, MYSQL97, arch="arm64", emulated=True)
    ctx.packaging = replace(RESOLVED, arch="arm64")
    with pytest.raises(
        InfraError,
        match=r"golang:1\.27 has no amd64 image to install go:github\.com/github/gh-ost v1\.1\.8 for arm64 in",
    ):
        await GhostProbe(ctx).start()
    assert r.images.asked == [("golang:1.27", "amd64")]


async def test_a_binary_not_of_the_pin_or_not_of_the_cell_s_arch_is_refused() -> None:
    for install, place, error, words in (
        (
            built(version="v1.1.7"),
            None,
            StageFailed,
            "asked to build gh-ost v1.1.8, the binary in the build says 'v1.1.7'",
        ),
        (built("arm64"), None, InfraError, "the gh-ost binary in the build is built for arm64, not amd64"),
        (None, placed(machine="aarch64"), InfraError, "the amd64 container of golang:1.27 runs as aarch64"),
        (None, placed("arm64"), InfraError, "binary in golang:1.27 for amd64 is built for arm64, not amd64"),
    ):
        r = rig()
        engine(r, install=install, place=place)
        ctx = context(r, GHOST, MYSQL97)
        ctx.packaging = RESOLVED
        with pytest.raises(error, match=re.escape(words)):
            await GhostProbe(ctx).start()

    r = rig()  # the build's image lacks the binary: ecoready's trouble, not gh-ost's
    engine(r)
    del r.host.images.readable[BIN]
    ctx = context(r, GHOST, MYSQL97)
    ctx.packaging = RESOLVED
    with pytest.raises(
        InfraError, match=r"/opt/ecoready/bin/gh-ost cannot be read out of the installed image .*: absent"
    ):
        await GhostProbe(ctx).start()


async def test_leftover_tables_or_a_missing_column_fail_the_check() -> None:
    for after, words in (
        ({"altered": str(ROWS), "has_column": "1", "leftovers": "_t_ghc,_t_gho"}, "left table(s) behind"),
        ({"altered": "0", "has_column": "0", "leftovers": ""}, "column added_online absent"),
    ):
        r = rig()
        seen = engine(r)
        seen["after"] = after
        ctx = context(r, GHOST, MYSQL97)
        ctx.packaging = RESOLVED
        probe = GhostProbe(ctx)
        await probe.start()
        await probe.smoke()
        (check,) = r.checks().values()
        assert check.outcome.value == "fail" and words in check.detail, check.detail


async def test_a_refused_migration_fails_the_check_in_gh_ost_s_words() -> None:
    r = rig()
    engine(r, migration=failed(1, MINIMAL))
    ctx = context(r, GHOST, MYSQL97)
    ctx.packaging = RESOLVED
    probe = GhostProbe(ctx)
    await probe.start()
    await probe.smoke()
    (check,) = r.checks().values()
    assert check.outcome.value == "fail" and "has 'MINIMAL' binlog_row_image, and only 'FULL'" in check.detail


async def test_a_download_that_fails_is_the_proxy_s_trouble_a_build_that_fails_is_gh_ost_s() -> None:
    r = rig()
    proxy_down = failed(1, "go: github.com/github/gh-ost@v1.1.8: dial tcp: i/o timeout\n", "ecoready-step: download\n")
    engine(r, install=proxy_down)
    ctx = context(r, GHOST, MYSQL97)
    ctx.packaging = RESOLVED
    with pytest.raises(RegistryError, match=r"go get of gh-ost v1\.1\.8 failed: go: .*i/o timeout"):
        await GhostProbe(ctx).start()
    assert ctx.packaging == RESOLVED  # nothing said of gh-ost

    r = rig()
    no_build = failed(
        2, "go/binlog/x.go:1: undefined: syscall.Foo\n", "ecoready-step: download\necoready-step: build\n"
    )
    engine(r, install=no_build)
    ctx = context(r, GHOST, MYSQL97, arch="arm64")
    ctx.packaging = replace(RESOLVED, arch="arm64")
    with pytest.raises(StageFailed, match=r"gh-ost v1\.1\.8 does not build for arm64: .*undefined: syscall\.Foo"):
        await GhostProbe(ctx).start()
    assert ctx.packaging.verdict is PackagingVerdict.MISSING and ctx.packaging.install_kind is InstallKind.FAILED

    r = rig()  # an image whose Go is older than gh-ost's go.mod asks: the row's mistake
    old_go = "go: github.com/github/gh-ost@v1.1.8 requires go >= 1.23.0 (running go 1.21.0; GOTOOLCHAIN=local)\n"
    engine(r, install=failed(1, old_go, "ecoready-step: download\n"))
    ctx = context(r, GHOST, MYSQL97)
    ctx.packaging = RESOLVED
    with pytest.raises(
        MatrixMismatch, match=r"row gh-ost: the image's Go is too old for gh-ost: .*requires go >= 1\.23"
    ):
        await GhostProbe(ctx).start()


async def test_a_module_proxy_the_installer_cannot_resolve_is_the_network_s_before_any_build() -> None:
    r = rig()
    r.host.unresolvable.add("proxy.golang.org")
    engine(r, install=failed(1, "go: github.com/github/gh-ost@v1.1.8: dial tcp: lookup proxy.golang.org\n"))
    ctx = context(r, GHOST, MYSQL97)
    ctx.packaging = RESOLVED
    with pytest.raises(RegistryError, match=r"does not resolve in the engine's containers") as caught:
        await GhostProbe(ctx).start()
    assert caught.value.registry == "proxy.golang.org"
    installer = [argv for role, argv in r.host.execs if role == "installer"]
    assert ["getent", "hosts", "proxy.golang.org"] in installer
    assert not [argv for argv in installer if argv[0] == "timeout"]  # the script never ran
    assert ctx.packaging == RESOLVED  # nothing said of gh-ost


def test_ecoready_drivers_lists_the_driver_rows_not_gh_ost() -> None:
    from ecoready.ui.verbs.drivers import _pins

    matrix = load(Path(__file__).resolve().parents[2] / "matrix.toml", {})
    rows = {row for row, _ in _pins([], matrix, None)}
    assert "gh-ost" not in rows and "connector-go-mysql" in rows
