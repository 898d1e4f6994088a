"""SQL over a real client binary inside a container (mariadb or mysql), over TCP.

Probes never hold a database connection from the tool's process: the client runs in a
container of the cell's arch on the cell's private network, so it works the same on a
remote engine and exercises the arch's own client. Credentials go in an option file
(`--defaults-extra-file`), never on the command line.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from ecoready.domain.errors import SqlError
from ecoready.domain.text import one_line

Row = dict[str, str | None]
_ERROR = re.compile(r"ERROR (\d+) \(([0-9A-Z]{5})\)(?: at line \d+)?: (.*)")
_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"


@dataclass(frozen=True)
class SqlTarget:
    host: str
    port: int
    user: str
    database: str | None = None


def client_command(client: str, cnf_path: str, target: SqlTarget, statement: str) -> list[str]:
    """The argv of one batch client call; `--defaults-extra-file` must come first."""
    argv = [
        client,
        f"--defaults-extra-file={cnf_path}",
        "--protocol=TCP",
        "-h",
        target.host,
        "-P",
        str(target.port),
        "--xml",
        "--batch",
        "--connect-timeout=10",
    ]
    if target.database:
        argv.append(f"--database={target.database}")
    argv += ["-e", statement]
    return argv


def option_file(user: str, password: str) -> bytes:
    """A [client] option file; values quoted so any character survives. The [mysql] group
    turns client commands on: MySQL's client (8.4 and later) runs `source FILE` from `-e`
    only with `--commands`, which MariaDB's client does not know (hence `loose-`)."""
    escaped = password.replace("\\", "\\\\").replace('"', '\\"')
    return f'[client]\nuser="{user}"\npassword="{escaped}"\n[mysql]\nloose-commands=1\n'.encode()


def parse_xml(output: str) -> list[list[Row]]:
    """Result sets of `mysql --xml` / `mariadb --xml` output (NULL -> None)."""
    text = output.strip()
    if not text:
        return []
    # Several statements print several documents; wrap them to parse in one go.
    text = re.sub(r"<\?xml[^>]*\?>", "", text)
    root = ET.fromstring(  # noqa: S314 - trusted: produced by the client we ran
        f'<all xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">{text}</all>'
    )
    results: list[list[Row]] = []
    for resultset in root.iter("resultset"):
        rows: list[Row] = []
        for row in resultset.iter("row"):
            rows.append(
                {f.get("name", ""): (None if f.get(_NIL) == "true" else (f.text or "")) for f in row.iter("field")}
            )
        results.append(rows)
    return results


def parse_error(stderr: str, statement: str = "") -> SqlError:
    for line in stderr.splitlines():
        match = _ERROR.search(line)
        if match:
            return SqlError(
                match.group(3).strip(), code=int(match.group(1)), sqlstate=match.group(2), statement=statement
            )
    return SqlError(one_line(stderr) or "client failed without a message", statement=statement)
