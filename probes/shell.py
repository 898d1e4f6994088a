"""The shell probe: a command-line client from the component's image, run in a container of
its own against the cell's backend server. The `client` option picks the check set:

- `mysqlsh` (MySQL Shell, bundled in the `mysql` and `percona/percona-server` images):
  `--sql` over the classic protocol (3306) and `--mysqlx` over the X protocol (33060),
  with `--json=raw` output parsed; bad SQL must give a non-zero exit and a JSON error
  object carrying the server's error code; `mysqlsh --version` names the cell's CPU.
- `mariadb` and `mysql` (the classic command-line clients: MariaDB's in the mariadb images
  and the lab's client image, MySQL's in the mysql images): batch mode (`--batch
  --skip-column-names`, tab-separated), bad SQL must exit non-zero with the server's
  `ERROR 1064`, `--xml` output parsed (NULL as `xsi:nil`), and the client's own `--version`
  names the cell's CPU. Credentials come from an option file; the same checks for both
  clients, only the binary and its version line differ.

MySQL Shell's JSON wrapping (docs/image-contracts.md "MySQL Shell"; mysql/mysql-shell
`mysqlshdk/shellcore/shell_console.cc`; MySQL Shell manual 5.7.5 "JSON Wrapping") prints
one JSON document per line: result sets as {"hasData": true, "rows": [...],
"executionTime": ..., "warningCount": ...}, and every console message as a one-key object:
{"info": ...}, {"warning": ...}, {"note": ...}, {"password": <prompt>}, {"error": <text or
{"code", "state", "message", ...}>}. The password reaches mysqlsh on stdin from a file
(`--passwords-from-stdin`), never argv.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ecoready.probe_api import (
    UNAME_MACHINE,
    CheckFailed,
    Container,
    Endpoint,
    Probe,
    Secret,
    StageFailed,
    option_file,
    parse_xml,
)
from ecoready.probes.shared.sql_server import X_PORT

PASSWORD_FILE = "/run/ecoready/backend-password"  # noqa: S105 - a path
CLIENT_CNF = "/run/ecoready/client.cnf"
CLIENTS = ("mysqlsh", "mariadb", "mysql")
_MARIADB_VERSION = re.compile(r"(?:Ver\s+\S+\s+Distrib|from)\s+(\S+?),?\s.*\((\w+)\)\s*$", re.M)
_VERSION = re.compile(r"Ver\s+(\S+)\s+for\s+(\S+)\s+on\s+(\S+)")


@dataclass(frozen=True)
class ShellOutput:
    """What one `mysqlsh --json=raw` run printed, split by kind."""

    results: list[dict[str, Any]] = field(default_factory=list)
    errors: list[Any] = field(default_factory=list)  # str or {"code", "state", "message", ...}
    messages: list[dict[str, Any]] = field(default_factory=list)  # info, warning, note, password
    other: list[str] = field(default_factory=list)  # lines that are not JSON

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The rows of the last result set that has data."""
        for result in reversed(self.results):
            if result.get("hasData") and isinstance(result.get("rows"), list):
                return [r for r in result["rows"] if isinstance(r, dict)]
        return []

    def error_code(self) -> int | None:
        for error in self.errors:
            if isinstance(error, dict) and isinstance(error.get("code"), int):
                return int(error["code"])
            if isinstance(error, str):
                match = re.search(r"\b(\d{4,5})\b", error)
                if match:
                    return int(match.group(1))
        return None

    def error_text(self) -> str:
        parts = []
        for error in self.errors:
            parts.append(str(error.get("message") or error) if isinstance(error, dict) else str(error))
        return "; ".join(parts) or (self.other[-1] if self.other else "")


def parse_json_output(stdout: str) -> ShellOutput:
    out = ShellOutput()
    for line in stdout.splitlines():
        text = line.strip()
        if not text:
            continue
        try:
            document = json.loads(text)
        except ValueError:
            out.other.append(text)
            continue
        if not isinstance(document, dict):
            out.other.append(text)
        elif "rows" in document or "hasData" in document:
            out.results.append(document)
        elif "error" in document:
            out.errors.append(document["error"])
        else:
            out.messages.append(document)
    return out


def mysqlsh_command(protocol: str, uri: str, statement: str) -> list[str]:
    """`mysqlsh --sql|--mysqlx` with JSON output; the password comes from a file on stdin."""
    mode = ["--sql"] if protocol == "classic" else ["--mysqlx", "--sql"]
    argv = ["mysqlsh", "--passwords-from-stdin", "--json=raw", *mode, f"--uri={uri}", "-e", statement]
    return ["sh", "-c", f"exec {shlex.join(argv)} < {PASSWORD_FILE}"]


def parse_version(text: str) -> tuple[str, str, str]:
    """`mysqlsh   Ver 8.4.0 for Linux on x86_64 - for MySQL 8.4.0 (MySQL Community Server
    (GPL))` -> ("8.4.0", "Linux", "x86_64")."""
    match = _VERSION.search(text)
    if not match:
        raise CheckFailed(f"unexpected mysqlsh --version output: {text.strip()[:160]!r}")
    return match.group(1), match.group(2), match.group(3)


class MysqlshChecks:
    """The mysqlsh check set."""

    def __init__(self, probe: ShellProbe) -> None:
        self.probe = probe

    @property
    def backend(self) -> Endpoint:
        return self.probe.backend

    def uri(self, port: int) -> str:
        return f"{self.backend.user}@{self.backend.host}:{port}"

    async def run(self, protocol: str, statement: str) -> tuple[int, ShellOutput]:
        port = self.backend.port if protocol == "classic" else X_PORT
        result = await self.probe.ctx.exec(self.probe.client, mysqlsh_command(protocol, self.uri(port), statement))
        return result.exit_code, parse_json_output(result.stdout + "\n" + result.stderr)

    async def query(self, protocol: str, statement: str) -> list[dict[str, Any]]:
        code, out = await self.run(protocol, statement)
        if code != 0 or out.errors:
            raise CheckFailed(f"mysqlsh {protocol} exited {code}: {out.error_text() or 'no error text'}")
        return out.rows

    async def ready(self) -> None:
        rows = await self.query("classic", "SELECT 1 AS ok")
        if not rows or rows[0].get("ok") != 1:
            raise StageFailed(f"SELECT 1 through mysqlsh returned {rows}")

    def checks(self) -> list[tuple[str, Callable[[], Awaitable[str]]]]:
        return [
            ("version", self.version),
            ("classic-sql", self.classic),
            ("x-protocol", self.x_protocol),
            ("error-exit", self.error_exit),
        ]

    async def version(self) -> str:
        result = await self.probe.ctx.exec(self.probe.client, ["mysqlsh", "--version"])
        if not result.ok:
            raise CheckFailed(f"mysqlsh --version: {result.last_line()}")
        version, system, machine = parse_version(result.stdout)
        expected = UNAME_MACHINE.get(self.probe.ctx.arch, self.probe.ctx.arch)
        if machine != expected:
            raise CheckFailed(f"mysqlsh {version} is built for {machine}, the cell is {expected}")
        return f"mysqlsh {version} for {system} on {machine}"

    async def classic(self) -> str:
        rows = await self.query("classic", "SELECT 1 + 1 AS two, @@version AS version, 'ünïcødé ✓' AS text")
        row = rows[0] if rows else {}
        if row.get("two") != 2 or row.get("text") != "ünïcødé ✓":
            raise CheckFailed(f"classic protocol returned {row}")
        return f"3306: server {row.get('version')}, JSON rows parsed"

    async def x_protocol(self) -> str:
        rows = await self.query("x", "SELECT 6 * 7 AS answer, @@mysqlx_port AS xport")
        row = rows[0] if rows else {}
        if row.get("answer") != 42:
            raise CheckFailed(f"X protocol returned {row}")
        return f"{X_PORT}: X protocol session, answer 42 (mysqlx_port {row.get('xport')})"

    async def error_exit(self) -> str:
        code, out = await self.run("classic", "SELEC nonsense")
        if code == 0:
            raise CheckFailed("bad SQL exited 0")
        error = out.error_code()
        if error != 1064:
            raise CheckFailed(f"bad SQL exited {code} but the JSON error code is {error} ({out.error_text()!r})")
        return f"exit {code}, JSON error 1064 (syntax error)"


def parse_mariadb_version(text: str) -> tuple[str, str]:
    """`mariadb from 11.8.3-MariaDB, client 15.2 for debian-linux-gnu (aarch64) using ...`
    (or the older `mariadb  Ver 15.1 Distrib 10.11.18-MariaDB, for debian-linux-gnu
    (x86_64) using ...`) -> (server version, machine)."""
    for line in text.splitlines():
        match = _MARIADB_VERSION.search(line.split(" using ")[0] if " using " in line else line)
        if match:
            return match.group(1).rstrip(","), match.group(2)
    raise CheckFailed(f"unexpected mariadb --version output: {text.strip()[:160]!r}")


def parse_client_version(client: str, text: str) -> tuple[str, str]:
    """(version, machine) from `mariadb --version` or `mysql --version` (`mysql  Ver 9.7.4-2
    for Linux on aarch64 ((Debian))`)."""
    if client == "mariadb":
        return parse_mariadb_version(text)
    version, _system, machine = parse_version(text)
    return version, machine


def parse_batch(stdout: str) -> list[list[str]]:
    """`--batch --skip-column-names` output: one row per line, tab-separated fields."""
    return [line.split("\t") for line in stdout.splitlines() if line]


class ClassicClientChecks:
    """The check set of a classic command-line client (`mariadb` or `mysql`)."""

    def __init__(self, probe: ShellProbe, client: str) -> None:
        self.probe = probe
        self.client = client

    def command(self, *args: str) -> list[str]:
        backend = self.probe.backend
        return [
            self.client,
            f"--defaults-extra-file={CLIENT_CNF}",
            "--protocol=TCP",
            "-h",
            backend.host,
            "-P",
            str(backend.port),
            "--connect-timeout=10",
            *args,
        ]

    async def run(self, *args: str) -> tuple[int, str, str]:
        result = await self.probe.ctx.exec(self.probe.client, self.command(*args))
        return result.exit_code, result.stdout, result.stderr

    async def ready(self) -> None:
        code, out, err = await self.run("--batch", "--skip-column-names", "-e", "SELECT 1")
        if code != 0 or out.strip() != "1":
            raise StageFailed(f"SELECT 1 through the {self.client} client: exit {code}: {(err or out).strip()[-200:]}")

    def checks(self) -> list[tuple[str, Callable[[], Awaitable[str]]]]:
        return [("version", self.version), ("batch", self.batch), ("error-exit", self.error_exit), ("xml", self.xml)]

    async def version(self) -> str:
        result = await self.probe.ctx.exec(self.probe.client, [self.client, "--version"])
        if not result.ok:
            raise CheckFailed(f"{self.client} --version: {result.last_line()}")
        version, machine = parse_client_version(self.client, result.stdout)
        expected = UNAME_MACHINE.get(self.probe.ctx.arch, self.probe.ctx.arch)
        if machine != expected:
            raise CheckFailed(f"the {self.client} client {version} is built for {machine}, the cell is {expected}")
        return f"{self.client} client {version} on {machine}"

    async def batch(self) -> str:
        code, out, err = await self.run(
            "--batch", "--skip-column-names", "-e", "SELECT 1 + 1, 'ünïcødé ✓', NULL; SELECT @@version"
        )
        rows = parse_batch(out)
        if code != 0 or len(rows) != 2 or rows[0] != ["2", "ünïcødé ✓", "NULL"]:
            raise CheckFailed(f"batch mode: exit {code}, rows {rows}: {err.strip()[-200:]}")
        return f"tab-separated rows, server {rows[1][0]}"

    async def error_exit(self) -> str:
        code, _out, err = await self.run("--batch", "-e", "SELEC nonsense")
        if code == 0:
            raise CheckFailed("bad SQL exited 0")
        if "ERROR 1064" not in err:
            raise CheckFailed(f"bad SQL exited {code} without ERROR 1064: {err.strip()[-200:]!r}")
        return f"exit {code}, ERROR 1064 (syntax error) on stderr"

    async def xml(self) -> str:
        code, out, err = await self.run("--xml", "-e", "SELECT 42 AS answer, NULL AS nothing, '<&>' AS markup")
        if code != 0:
            raise CheckFailed(f"--xml: exit {code}: {err.strip()[-200:]}")
        rows = parse_xml(out)[-1] if out.strip() else []
        if rows != [{"answer": "42", "nothing": None, "markup": "<&>"}]:
            raise CheckFailed(f"--xml parsed as {rows}")
        return "XML result set parsed (NULL as xsi:nil, markup escaped)"


class ShellProbe(Probe):
    kind = "shell"

    async def start(self) -> None:
        ctx = self.ctx
        client = str(ctx.options.get("client") or "mysqlsh")
        if client not in CLIENTS:
            raise StageFailed(f"client {client!r} has no check set (known: {', '.join(CLIENTS)})")
        self.backend = await ctx.backend()
        files: dict[str, bytes | Secret] = {PASSWORD_FILE: self.backend.password}
        if client != "mysqlsh":
            files[CLIENT_CNF] = option_file(self.backend.user, self.backend.password.reveal())
        # The component's image as a client box: its own entrypoint would start a server.
        self.client: Container = await ctx.start_container(
            "client",
            entrypoint=["sleep"],
            command=["infinity"],
            files=files,
        )
        self.checks: MysqlshChecks | ClassicClientChecks = (
            MysqlshChecks(self) if client == "mysqlsh" else ClassicClientChecks(self, client)
        )
        await ctx.wait_ready(self.client, self.checks.ready, what=f"a {client} round trip to the backend")

    async def smoke(self) -> None:
        for name, fn in self.checks.checks():
            await self.ctx.check(name, fn)


PROBE = ShellProbe
