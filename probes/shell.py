"""The shell probe: a command-line client from the component's image, run in a container of
its own against the cell's backend server. The `client` option picks the check set:

- `mysqlsh` (MySQL Shell, bundled in the `mysql` and `percona/percona-server` images):
  `--sql` over the classic protocol (3306) and `--mysqlx` over the X protocol (33060),
  with `--json=raw` output parsed; bad SQL must give a non-zero exit and a JSON error
  object carrying the server's error code; `mysqlsh --version` names the cell's CPU.
- `mariadb` (the MariaDB client): added by the lab probes (issue 4).

MySQL Shell's JSON wrapping (mysql/mysql-shell `mysqlshdk/shellcore/shell_console.cc`;
MySQL Shell manual 5.7.5 "JSON Wrapping") prints one JSON document per line: result sets
as {"hasData": true, "rows": [...], "executionTime": ..., "warningCount": ...}, and every
console message as a one-key object: {"info": ...}, {"warning": ...}, {"note": ...},
{"password": <prompt>}, {"error": <text or {"code", "state", "message", ...}>}.
The password reaches mysqlsh on stdin from a file (`--passwords-from-stdin`), never argv.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from app.context import Container
from app.model import UNAME_MACHINE
from probes.base import CheckFailed, Endpoint, Probe, StageFailed

PASSWORD_FILE = "/run/ecoready/backend-password"  # noqa: S105 - a path
X_PORT = 33060
CLIENTS = ("mysqlsh",)  # the lab probes add "mariadb"
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


class ShellProbe(Probe):
    kind = "shell"

    async def start(self) -> None:
        ctx = self.ctx
        client = str(ctx.options.get("client") or "mysqlsh")
        if client != "mysqlsh":
            raise StageFailed(f"client {client!r} has no check set in this version")
        self.backend = await ctx.backend()
        # The component's image as a client box: its own entrypoint would start a server.
        self.client: Container = await ctx.start_container(
            "client",
            entrypoint=["sleep"],
            command=["infinity"],
            files={PASSWORD_FILE: self.backend.password},
        )
        self.checks = MysqlshChecks(self)
        await ctx.wait_ready(self.client, self.checks.ready, what="a mysqlsh round trip to the backend")

    async def smoke(self) -> None:
        for name, fn in self.checks.checks():
            await self.ctx.check(name, fn)


PROBE = ShellProbe
