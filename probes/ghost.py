"""gh-ost (GitHub's triggerless online schema migration for MySQL) against the backend server.

GitHub publishes no gh-ost image (none on Docker Hub; ghcr.io/github/gh-ost refuses
anonymous pulls), so the row names the official Go image and gh-ost's module pinned to a
release (`install = "go:github.com/github/gh-ost@v1.1.8"`). The packaging stage resolved it
on the Go module proxy (app/packages/goproxy.py: a program, always built from source); start
builds the `gh-ost` command as gh-ost's release binaries are built: on the engine's native
arch for the cell's (`GOOS=linux GOARCH=<cell arch>`, CGO_ENABLED=0), in the row's image
pulled for the native arch, from the module proxy with that image's Go (`go get` of the
command at that version, then `go build`). For an emulated cell that is a
cross-compilation: the same build under qemu-user took more than 23 minutes. The binary is
then read out of the build's image and put into the row's image of the cell's own arch,
where it runs (under qemu on an emulated cell); there `go version -m` must say it is the
pinned release built for the cell's GOARCH and `uname -m` the cell's machine. Both steps
are cached images (`ecoready.probe_api.install`), per image, arch and version. Not `go
install PKG@VERSION`: that one also asks the proxy for the module's version list (to warn
of a deprecation) and fails where a proxy serves the version but not the list; `go get`
of an exact version resolves the same build list from gh-ost's own go.mod.

A download that fails is the module proxy's trouble (`registry`, never gh-ost's); a build
that fails is gh-ost's for that arch (`broken`); a binary of another version than the pin
is gh-ost's too, one of another arch or a container of another machine ecoready's.

smoke, one check: on a table of its own with ROWS rows, `gh-ost --allow-on-master
--execute` adds a column (a ghost table, the binlog read as a replica with its own server
id, a row copy, an atomic cut-over). It passes when gh-ost says it is done, every row is
there with its contents unchanged (a checksum of every row before and after), the new
column exists with its default, and gh-ost left none of its tables behind (`_t_gho`, `_t_ghc`,
`_t_ghk`, `_t_del`: any table but the migrated one).
The credentials reach gh-ost in an option file (`--conf`, its `[client]` section), never
on its command line. On MySQL 8.4 and later root authenticates with caching_sha2_password;
the probe logs in once over TLS first (`warm_auth_cache`), so gh-ost's plain connections
get the fast path whatever their driver does without TLS.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from typing import NoReturn

from ecoready.probe_api import (
    STEP_LINE,
    UNAME_MACHINE,
    CheckFailed,
    InfraError,
    Installed,
    InstallKind,
    MatrixMismatch,
    Packaging,
    PackagingVerdict,
    Probe,
    RegistryError,
    SqlError,
    StageFailed,
    install,
    installed_file,
    native_arch,
    registry_url,
    report_packaging,
    step_of,
)
from ecoready.probes.shared import drivers
from ecoready.probes.shared.accounts import warm_auth_cache
from ecoready.probes.shared.sql_server import Server, hex32, numbers

COMMAND = "go/cmd/gh-ost"  # the command's package in gh-ost's module
BIN = f"{drivers.ROOT}/bin/gh-ost"
STAGED = "/tmp/ecoready-gh-ost.staged"  # the built binary, put into the cell's image
MAX_BINARY = 128 << 20  # bytes: gh-ost v1.1.8 stripped is about 15 MiB
WORK = "/tmp/ecoready-gh-ost"
CONF = "/run/ecoready/gh-ost.cnf"
DATABASE = "ecoready_ghost"
TABLE = "t"
ROWS = 3000
COLUMN = "added_online"
# seconds, on the native arch: the download and a build of gh-ost, about 60 s on a quiet
# 2-core machine; a cold build beside two runs installing drivers under emulation (load 14-16)
# took over 420 s. Still bounded, never scaled (the build is native).
INSTALL_LIMIT = 840.0
PLACE_LIMIT = 60.0  # seconds, native: the binary put into the cell's image and asked what it is
RUN_LIMIT = 100.0  # seconds, native: one migration of ROWS rows (a few seconds here), within smoke's 120
SEED = (
    f"CREATE DATABASE {DATABASE}; "
    f"CREATE TABLE {DATABASE}.{TABLE} (id INT PRIMARY KEY, v CHAR(32) NOT NULL) ENGINE=InnoDB; "
    f"INSERT INTO {DATABASE}.{TABLE} SELECT n, {hex32('n')} FROM {numbers(ROWS)}"
)
CHECKSUM = f"SELECT COUNT(*) AS n, BIT_XOR(CRC32(CONCAT(id, ':', v))) AS sum FROM {DATABASE}.{TABLE}"
AFTER = (
    f"SELECT (SELECT COUNT(*) FROM {DATABASE}.{TABLE} WHERE {COLUMN} = 7) AS altered, "
    f"(SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = '{DATABASE}' "
    f"AND table_name = '{TABLE}' AND column_name = '{COLUMN}') AS has_column, "
    f"(SELECT IFNULL(GROUP_CONCAT(table_name ORDER BY table_name), '') FROM information_schema.tables "
    f"WHERE table_schema = '{DATABASE}' AND table_name <> '{TABLE}') AS leftovers"
)


def _binary_facts(binary: str, module: str) -> list[str]:
    """Lines printing what `go version -m` reads of a binary: the module version it was built
    from (its `mod` line) and the arch it was built for (its `build GOARCH=` line)."""
    info = f"go version -m {binary}"
    mod = f"""awk -v m={shlex.quote(module)} '$1 == "mod" && $2 == m {{print $3}}'"""
    goarch = """awk '$1 == "build" && $2 ~ /^GOARCH=/ {print substr($2, 8)}'"""
    return [
        f'echo "ecoready-label: version=$({info} | {mod})"',
        f'echo "ecoready-label: goarch=$({info} | {goarch})"',
    ]


def install_script(module: str, version: str, arch: str) -> str:
    """Build the gh-ost command of `module` at `version` for linux/`arch` into BIN with the
    image's Go, as gh-ost's release binaries are built (its build.sh exports GOOS and GOARCH
    per target and builds linux/amd64 and linux/arm64 on one machine: for another arch it is
    a cross-compilation); CGO_ENABLED=0 comes in the environment. The facts printed: the
    version and arch the binary says it was built from and for, and with which Go."""
    package = shlex.quote(f"{module}/{COMMAND}")
    steps = [
        drivers.need("command -v go", "the image has no go: gh-ost is built in a Go toolchain image (golang)"),
        f"export GOOS=linux GOARCH={shlex.quote(arch)}",
        f"mkdir -p {WORK}/src {drivers.ROOT}/bin",
        f"cd {WORK}/src",
        "go mod init ecoready/gh-ost",
        f"echo {STEP_LINE}download",
        f"go get {shlex.quote(f'{module}/{COMMAND}@{version}')}",
        f"echo {STEP_LINE}build",
        f"go build -trimpath -ldflags='-s -w' -o {BIN} {package}",
        "cd /",
        f"rm -rf {WORK}",
        *_binary_facts(BIN, module),
        'echo "ecoready-label: go=$(go env GOVERSION)"',
    ]
    return " &&\n".join(steps)


def place_script(module: str) -> str:
    """Put the built binary (given at STAGED) at BIN in the cell's own-arch image; the facts
    printed: what the binary says of itself there, and the machine the container runs as."""
    steps = [
        drivers.need("command -v go", "the image has no go: gh-ost is run in a Go toolchain image (golang)"),
        f"install -D -m 0755 {STAGED} {BIN}",
        f"rm -f {STAGED}",
        *_binary_facts(BIN, module),
        'echo "ecoready-label: machine=$(uname -m)"',
    ]
    return " &&\n".join(steps)


def conf_file(user: str, password: str) -> bytes:
    """gh-ost's `--conf` (read with go-ini): `[client]` user and password, each quoted with
    backquotes, which go-ini takes literally (our passwords are letters and digits)."""
    return f"[client]\nuser = `{user}`\npassword = `{password}`\n".encode()


def ghost_command(host: str, port: int) -> list[str]:
    return [
        BIN,
        f"--conf={CONF}",
        f"--host={host}",
        f"--port={port}",
        f"--database={DATABASE}",
        f"--table={TABLE}",
        f"--alter=ADD COLUMN {COLUMN} INT NOT NULL DEFAULT 7",
        "--allow-on-master",  # no replica here: gh-ost reads the primary's binlog as a replica
        "--ok-to-drop-table",  # the old table (`_t_del`) is dropped after the cut-over
        "--verbose",  # INFO lines: `Done migrating` at the end
        "--execute",
    ]


@dataclass(frozen=True)
class Outcome:
    done: bool  # gh-ost said it finished the migration
    why: str  # its own words when it did not (a FATAL or ERROR line, else its last line)


def outcome(stdout: str, stderr: str, exit_code: int) -> Outcome:
    """What a gh-ost run said: done (`Done migrating` and exit 0), or why not."""
    lines = [ln.strip() for ln in (stdout + "\n" + stderr).splitlines() if ln.strip()]
    if exit_code == 0 and any("Done migrating" in ln for ln in lines):
        return Outcome(True, "")
    fatal = [ln for ln in lines if " FATAL " in f" {ln} "]
    errors = [ln for ln in lines if " ERROR " in f" {ln} "]
    said = (fatal or errors or lines or [""])[0 if fatal else -1]
    why = said or "no output"
    return Outcome(False, f"exit {exit_code}: {why}" if exit_code else f"no `Done migrating`: {why}")


class GhostProbe(Probe):
    kind = "ghost"

    async def start(self) -> None:
        ctx = self.ctx
        image_id = await self._install()
        backend = await ctx.backend()
        self.server = Server(ctx, backend.container, backend.password, backend.flavor)
        self.backend = backend
        await self.server.query(SEED)
        self.before = await self._checksum()
        await warm_auth_cache(ctx, backend)
        self.tool = await ctx.start_container(
            "gh-ost",
            image_id=image_id,
            files={CONF: conf_file(backend.user, backend.password.reveal())},
            command=["sleep", "infinity"],
            user="nobody",
            mem_limit="1g",
        )
        state = await ctx.state(self.tool)
        if not state.running:
            raise StageFailed(await ctx.why_stopped(self.tool))
        version = await ctx.exec(self.tool, [BIN, "--version"], timeout=ctx.scaled(30))
        if not version.ok:
            raise StageFailed(f"gh-ost does not run: exit {version.exit_code}: {version.last_line()}")

    async def _install(self) -> str:
        """gh-ost built on the engine's native arch for the cell's (cross-compiled when the
        cell is emulated: a build under qemu takes tens of minutes), then put into the row's
        image of the cell's arch, where it runs; both steps cached. The packaging is
        reported with how it went."""
        ctx = self.ctx
        packaging = ctx.packaging
        if packaging is None:
            raise InfraError("the packaging stage gave this row no module version to build")
        native = native_arch(ctx)
        built = await install(
            ctx,
            install_script(packaging.package, packaging.version, ctx.arch),
            of=f"go:{packaging.package} {packaging.version} for {ctx.arch}",
            env=drivers.go_env(WORK, cgo=False),
            timeout=INSTALL_LIMIT,  # native, never emulated
            arch=native,
            reaches=drivers.downloads_from(packaging),
        )
        if not built.image_id:
            self._build_failed(packaging, built)
        self._verify(packaging, built, "the build")
        binary = await installed_file(ctx, built, BIN, max_bytes=MAX_BINARY)
        placed = await install(
            ctx,
            place_script(packaging.package),
            of=f"gh-ost {packaging.version} for {ctx.arch}",
            env={},
            timeout=ctx.scaled(PLACE_LIMIT),
            files={STAGED: binary},
        )
        if not placed.image_id:
            assert placed.result is not None
            failed = drivers.failure(placed.result.stdout, placed.result.stderr)
            if failed.mismatch:
                raise MatrixMismatch(f"row {ctx.cell.component.id}: {failed.mismatch}")
            why = failed.last or f"exit code {placed.result.exit_code}"
            raise InfraError(f"putting gh-ost {packaging.version} into {ctx.image_ref} for {ctx.arch} failed: {why}")
        self._verify(packaging, placed, f"{ctx.image_ref} for {ctx.arch}")
        machine = placed.labels.get("ecoready.install.machine", "")
        if machine != UNAME_MACHINE.get(ctx.arch, ctx.arch):
            raise InfraError(f"the {ctx.arch} container of {ctx.image_ref} runs as {machine or 'an unknown machine'}")
        go = built.labels.get("ecoready.install.go", "")
        how = f"cross-compiled on {native} for {ctx.arch}" if native != ctx.arch else f"built on {native}"
        how = f"{how} with go build ({go}), as gh-ost's release binaries are"
        if not built.cached:
            how = f"{how}, in {built.seconds:.0f} s"
        # every view says it: upstream publishes no image, the build is ecoready's
        how = f"{how}, from the Go module proxy: GitHub publishes no gh-ost image"
        report_packaging(
            ctx,
            replace(
                packaging,
                verdict=PackagingVerdict.READY,
                install=how,
                install_kind=InstallKind.BUILT,
                cached=built.cached,
            ),
        )
        return placed.image_id

    def _verify(self, packaging: Packaging, done: Installed, where: str) -> None:
        """The binary says it is the pinned release (else gh-ost's build is not what the row
        asked: the component's) built for the cell's arch (else ecoready's build: the tool's)."""
        version = done.labels.get("ecoready.install.version", "")
        if version != packaging.version:
            raise StageFailed(f"asked to build gh-ost {packaging.version}, the binary in {where} says {version!r}")
        goarch = done.labels.get("ecoready.install.goarch", "")
        if goarch != self.ctx.arch:
            raise InfraError(
                f"the gh-ost binary in {where} is built for {goarch or 'an unknown arch'}, not {self.ctx.arch}"
            )

    def _build_failed(self, packaging: Packaging, done: Installed) -> NoReturn:
        """Who is to blame for a build that failed: the row, the module proxy, ecoready, gh-ost."""
        ctx = self.ctx
        assert done.result is not None
        failed = drivers.failure(done.result.stdout, done.result.stderr)
        if failed.mismatch:
            raise MatrixMismatch(f"row {ctx.cell.component.id}: {failed.mismatch}")
        why = failed.last or f"exit code {done.result.exit_code}"
        output = f"{done.result.stdout}\n{done.result.stderr}".splitlines()
        too_old = next((ln.strip() for ln in output if "requires go >=" in ln and "GOTOOLCHAIN=local" in ln), "")
        if too_old:  # the row's image, not gh-ost nor the proxy
            raise MatrixMismatch(f"row {ctx.cell.component.id}: the image's Go is too old for gh-ost: {too_old}")
        step = step_of(done.result.stdout)
        if step == "download":  # gh-ost's source (or a module it needs) never arrived
            raise RegistryError(registry_url("go"), f"go get of gh-ost {packaging.version} failed: {why}")
        if step != "build":  # our own steps around the build
            raise InfraError(f"the install of gh-ost {packaging.version} failed outside its build: {why}")
        report_packaging(
            ctx, replace(packaging, verdict=PackagingVerdict.MISSING, install=why, install_kind=InstallKind.FAILED)
        )
        raise StageFailed(f"gh-ost {packaging.version} does not build for {ctx.arch}: {why}")

    async def _checksum(self) -> dict[str, str]:
        rows = await self.server.query(CHECKSUM)
        return {k: str(v) for k, v in (rows[0] if rows else {}).items()}

    async def smoke(self) -> None:
        await self.ctx.check("gh-ost", self._migrate)

    async def _migrate(self) -> str:
        ctx = self.ctx
        argv = ghost_command(self.backend.host, self.backend.port)
        result = await ctx.exec(self.tool, argv, timeout=ctx.scaled(RUN_LIMIT))
        said = outcome(result.stdout, result.stderr, result.exit_code)
        if not said.done:
            raise CheckFailed(f"gh-ost did not migrate {DATABASE}.{TABLE}: {said.why}")
        try:
            after = await self._checksum()
            rows = await self.server.query(AFTER)
        except SqlError as exc:
            raise CheckFailed(f"the migrated table cannot be read: {exc}") from None
        facts = {k: str(v) for k, v in (rows[0] if rows else {}).items()}
        if after != self.before:
            raise CheckFailed(f"rows changed by the migration: before {self.before}, after {after}")
        if facts.get("has_column") != "1" or facts.get("altered") != str(ROWS):
            raise CheckFailed(
                f"after the migration: column {COLUMN} {'present' if facts.get('has_column') == '1' else 'absent'}, "
                f"{facts.get('altered')} of {ROWS} rows with its default"
            )
        if facts.get("leftovers"):
            raise CheckFailed(f"gh-ost left table(s) behind in {DATABASE}: {facts['leftovers']}")
        return (
            f"{TABLE}: {ROWS} rows migrated online (ADD COLUMN {COLUMN}), every row's checksum unchanged, "
            f"no _gho/_ghc/_ghk/_del table left ({result.seconds:.0f} s)"
        )


PROBE = GhostProbe
