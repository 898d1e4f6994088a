"""The connector probe's pure parts: reading a smoke program's JSON lines, explaining
checks it never reported, its command line, its options in the matrix, and the lab's safe
unpacking of a builder's output."""

from __future__ import annotations

import io
import tarfile
import textwrap
from pathlib import Path

import pytest

from ecoready.domain.errors import ConfigError, EnvironmentProblem
from ecoready.domain.specs import ExecResult
from ecoready.lab.core import extract_tar
from ecoready.lab.recipes import IMAGES, builder_named
from ecoready.matrix.kinds import CONNECTOR_LANGUAGES, KINDS, SMOKE_DRIVERS
from ecoready.matrix.load import parse
from ecoready.probe_api import Container, Endpoint, MatrixMismatch, Packaging, PackagingVerdict, Secret
from ecoready.probes import smoke
from ecoready.probes.connector import (
    CHECKS,
    PASSWORD_PATH,
    PROGRAMS,
    parse_lines,
    smoke_argv,
    smoke_port,
    unreported,
)
from ecoready.probes.shared.drivers import CLASSIC, X_PROTOCOL, X_PROTOCOL_DRIVERS, recipe
from ecoready.probes.shared.sql_server import X_PORT, Server

ROOT = Path(__file__).resolve().parents[2]


def line(check: str, ok: bool, detail: str = "d") -> str:
    return f'{{"check": "{check}", "ok": {"true" if ok else "false"}, "detail": "{detail}"}}'


def test_every_language_has_a_program_and_back() -> None:
    # `python` is only a driver row's: its program comes with the driver it installs
    assert set(PROGRAMS) | {"python"} == set(CONNECTOR_LANGUAGES) == set(KINDS["connector"].choices["language"])
    assert set(SMOKE_DRIVERS) <= set(CONNECTOR_LANGUAGES)


def test_check_lines_are_read_one_by_one() -> None:
    out = parse_lines("\n".join([line("connect", True, "TCP db:3306"), line("version", False, "no version")]))
    assert out.checks["connect"].ok and out.checks["connect"].detail == "TCP db:3306"
    assert not out.checks["version"].ok and out.checks["version"].detail == "no version"
    assert out.other == ()


def test_other_output_is_kept_aside_not_mistaken_for_a_check() -> None:
    stdout = "\n".join(
        [
            "Picked up JAVA_TOOL_OPTIONS: -Xmx64m",
            '{"check": "connect", "ok": "yes"}',  # ok must be a boolean
            '["connect", true]',
            '{"ok": true}',
            line("rollback", True),
            "{not json",
            "",
        ]
    )
    out = parse_lines(stdout)
    assert set(out.checks) == {"rollback"}
    assert len(out.other) == 5


def test_a_pass_never_hides_a_fail_of_the_same_check() -> None:
    assert not parse_lines(line("connect", False, "1045") + "\n" + line("connect", True)).checks["connect"].ok
    out = parse_lines(line("connect", True) + "\n" + line("connect", False, "later"))
    assert not out.checks["connect"].ok and out.checks["connect"].detail == "later"


def test_multi_line_driver_messages_become_one_line() -> None:
    out = parse_lines(line("wrong_password", True, "error 1045: Access denied\\nCurrent charset is UTF-8"))
    assert out.checks["wrong_password"].detail == "error 1045: Access denied | Current charset is UTF-8"


def test_utf8_details_survive() -> None:
    out = parse_lines('{"check": "prepared_utf8mb4", "ok": true, "detail": "\'ecoready \U0001f42c\' exact"}')
    assert "\U0001f42c" in out.checks["prepared_utf8mb4"].detail


@pytest.mark.parametrize(
    ("code", "stderr", "words"),
    [
        (124, "", "did not finish within 45 s"),
        (137, "", "did not finish within 45 s"),
        (127, "sh: 1: smoke-go: not found", "could not be run (exit 127); stderr: sh: 1: smoke-go: not found"),
        (1, "a\nb\nTraceback (most recent call last):\n  File x\nKeyError: 'v'", "exit code 1"),
        (0, "", "did not report this check"),
    ],
)
def test_an_unreported_check_says_why(code: int, stderr: str, words: str) -> None:
    detail = unreported("smoke-go", ExecResult(code, "", stderr, 1.0), 45)
    assert words in detail
    if code == 1:
        assert detail.endswith("stderr: Traceback (most recent call last): | File x | KeyError: 'v'")


def test_the_password_is_a_file_never_an_argument() -> None:
    argv = smoke_argv(PROGRAMS["python-mysqlclient"], "backend-server", 3306, "root", 30.0)
    assert argv[:3] == ["smoke-python", "--driver", "mysqlclient"]
    assert argv[argv.index("--password-file") + 1] == PASSWORD_PATH
    assert "--password" not in argv
    assert argv[argv.index("--connect-timeout") + 1] == "30"
    assert CHECKS == ("connect", "version", "prepared_utf8mb4", "rollback", "wrong_password")


MATRIX = textwrap.dedent("""\
    [[components]]
    id = "db"
    category = "server"
    probe = "server"
    image = "127.0.0.1:5000/lab/mariadb:10.11"

    [[components]]
    id = "conn"
    category = "connector"
    probe = "connector"
    image = "127.0.0.1:5000/lab/connectors:bookworm"
    backend = "db"
""")


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse(text, "m.toml")
    return [f"{p.line}:{p.col}: {p.message}" for p in info.value.problems]


def test_a_connector_row_parses_with_its_options() -> None:
    matrix = parse(MATRIX + 'options = { language = "php", password = "not-the-password" }\n', "m.toml")
    assert dict(matrix.component("conn").options) == {"language": "php", "password": "not-the-password"}


def test_an_unknown_language_gets_a_did_you_mean() -> None:
    assert problems(MATRIX + 'options = { language = "pyhton-pymysql" }\n') == [
        "13:24: unknown language 'pyhton-pymysql' for probe 'connector' (did you mean 'python-pymysql'?)"
    ]
    (message,) = problems(MATRIX + 'options = { language = "cobol" }\n')
    assert "unknown language 'cobol'" in message and "one of c, cpp, java" in message


def test_the_language_is_required_and_options_are_typed() -> None:
    assert problems(MATRIX) == ["7:1: missing required key 'components[1].options.language'"]
    assert problems(MATRIX + 'options = { language = "go", password = 1 }\n') == [
        "13:41: 'components[1].options.password' must be a string, not an integer"
    ]
    assert problems(MATRIX + 'options = { language = "go", pasword = "x" }\n') == [
        "13:30: unknown key 'components[1].options.pasword' (did you mean 'password'?)"
    ]


def test_a_connector_needs_a_backend() -> None:
    text = MATRIX.replace('backend = "db"\n', "") + 'options = { language = "c" }\n'
    assert any("needs a 'backend'" in p for p in problems(text))


def test_the_lab_matrix_has_a_debian_row_per_language() -> None:
    matrix = parse((ROOT / "containers" / "lab.toml").read_text(), "lab.toml")
    debian = [c for c in matrix.components if c.probe == "connector" and "driver" not in c.options]
    rows = {c.options["language"]: c for c in debian}
    assert set(rows) == set(CONNECTOR_LANGUAGES) - {"python"}
    for language, row in rows.items():
        assert row.id == f"connector-{language}"
        assert row.image == "127.0.0.1:5000/lab/connectors:bookworm"
    # three languages against MySQL 9.7 (caching_sha2_password), the others against MariaDB
    assert {lang for lang, row in rows.items() if row.backend == "mysql-9.7"} == {"c", "go", "ruby"}
    assert {row.backend for row in rows.values()} == {"mysql-9.7", "mariadb-10.11"}
    (image,) = [i for i in IMAGES if i.name == "connectors"]
    assert image.builder is not None and builder_named(image.builder).context.startswith(image.context + "/")


# -- Oracle's Connector/Node.js: the X DevAPI over the X Protocol ------------------------------
SERVER = Container("i", "n", "backend-server", "server", "img", "id")


def npm(package: str) -> Packaging:
    return Packaging(f"npm:{package}", "npm", package, "8.0.35", "amd64", PackagingVerdict.READY)


def test_an_x_protocol_driver_is_given_the_x_plugin_s_port_and_the_others_the_classic_one() -> None:
    assert recipe(npm("@mysql/xdevapi")).protocol == X_PROTOCOL and "@mysql/xdevapi" in X_PROTOCOL_DRIVERS
    assert recipe(npm("mysql2")).protocol == CLASSIC == recipe(npm("mariadb")).protocol
    # the X port is the server's fact: MySQL's and Percona Server's X Plugin, none in MariaDB
    root = Secret("root", "pw")
    mysql = Server(None, SERVER, root, "mysql").endpoint  # type: ignore[arg-type]  # no context needed
    assert (mysql.port, mysql.x_port) == (3306, X_PORT) == (3306, 33060)
    assert Server(None, SERVER, root, "percona").endpoint.x_port == X_PORT  # type: ignore[arg-type]
    assert Server(None, SERVER, root, "mariadb").endpoint.x_port is None  # type: ignore[arg-type]
    assert smoke_port(X_PROTOCOL, mysql, "row") == 33060 and smoke_port(CLASSIC, mysql, "row") == 3306
    mariadb = Endpoint("backend-server", 3306, "root", root, SERVER, flavor="mariadb")
    with pytest.raises(MatrixMismatch, match=r"row connector-x: .*only the X Protocol.*\(MariaDB\) has no X Plugin"):
        smoke_port(X_PROTOCOL, mariadb, "connector-x")
    argv = smoke_argv(recipe(npm("@mysql/xdevapi")).program, "backend-server", 33060, "root", 5.0)
    assert argv[2:6] == ["--driver", "@mysql/xdevapi", "--host", "backend-server"] and "33060" in argv


def test_the_nodejs_smoke_program_speaks_every_driver_a_row_may_name() -> None:
    program = smoke.source("smoke-nodejs").decode()
    usage = next(line for line in program.splitlines() if "'usage: smoke-nodejs" in line)
    assert set(SMOKE_DRIVERS["nodejs"]) == set(usage.split("--driver ")[1].split("]")[0].split("|"))
    assert set(X_PROTOCOL_DRIVERS) <= set(SMOKE_DRIVERS["nodejs"])
    # the X DevAPI's checks read the X Plugin's own counters, not the classic protocol's
    for status in ("Mysqlx_prep_prepare", "Mysqlx_prep_execute", "Mysqlx_ssl_cipher"):
        assert status in program


# What smoke-nodejs printed with @mysql/xdevapi 8.0.35 against the lab's MySQL 9.7 (amd64, --tls
# yes and a caching_sha2_password account): SHA256_MEMORY is refused (see docs/drivers.md).
X_RUN = """\
{"check":"connect","ok":true,"detail":"X Protocol db:33060 as root over TLS (PLAIN), @mysql/xdevapi 8.0.35, \
Node.js v24.22.2 x64"}
{"check":"version","ok":true,"detail":"9.7.4-2"}
{"check":"prepared_utf8mb4","ok":true,"detail":"X Protocol prepared statement (a find, prepared on its second run: \
Mysqlx_prep_prepare +1, Mysqlx_prep_execute +1) with 'ecoready 🐬 ✓ ü' (20 bytes) bound, after a CRUD \
insert (Mysqlx_crud_insert +1): matched and read back byte-exact"}
{"check":"rollback","ok":true,"detail":"insert seen inside the transaction, gone after rollback()"}
{"check":"wrong_password","ok":true,"detail":"error 1045: Access denied for user 'root'@'172.20.0.3' \
(using password: YES)"}
{"check":"tls","ok":true,"detail":"encrypted: TLSv1.3 TLS_AES_128_GCM_SHA256 (X Protocol, PLAIN; \
server certificate not verified)"}
{"check":"caching_sha2_password","ok":true,"detail":"ecoready_sha2@% logged in with PLAIN over TLSv1.3 \
TLS_AES_128_GCM_SHA256; then SHA256_MEMORY unencrypted, from the X Plugin's cache: refused (error 1045: Access denied \
for user 'ecoready_sha2'@'172.20.0.3' (using password: YES))"}
"""


def test_the_x_devapi_program_s_lines_read_as_every_program_s() -> None:
    out = parse_lines(X_RUN)
    assert list(out.checks) == [*CHECKS, "tls", "caching_sha2_password"] and out.other == ()
    assert all(line.ok for line in out.checks.values())
    assert "@mysql/xdevapi 8.0.35" in out.checks["connect"].detail
    assert "Mysqlx_prep_prepare +1" in out.checks["prepared_utf8mb4"].detail
    assert out.checks["tls"].detail.startswith("encrypted: TLS")
    assert "PLAIN over TLS" in out.checks["caching_sha2_password"].detail
    assert "SHA256_MEMORY unencrypted, from the X Plugin's cache: refused" in out.checks["caching_sha2_password"].detail


def test_a_connector_row_may_name_the_x_devapi() -> None:
    row = (
        MATRIX.replace("lab/connectors:bookworm", "node:24")
        + 'options = { language = "nodejs", driver = "npm:@mysql/xdevapi@8.0" }\n'
    )
    assert parse(row, "m.toml").component("conn").options["driver"] == "npm:@mysql/xdevapi@8.0"


def tar_of(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info, data in members:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return buffer.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, mode: int = 0o644, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.linkname = kind, mode, link
    return info


def test_builder_output_unpacks_files_with_their_exec_bit(tmp_path: Path) -> None:
    archive = tar_of(
        (member("out", tarfile.DIRTYPE, 0o755), b""),
        (member("out/arm64/smoke-go", mode=0o4777), b"\x7fELF"),
        (member("out/java/EcoreadySmoke.class"), b"\xca\xfe"),
    )
    extract_tar(archive, tmp_path)
    go = tmp_path / "out" / "arm64" / "smoke-go"
    assert go.read_bytes() == b"\x7fELF"
    assert go.stat().st_mode & 0o7777 == 0o755  # setuid and world-write dropped
    assert (tmp_path / "out" / "java" / "EcoreadySmoke.class").read_bytes() == b"\xca\xfe"


@pytest.mark.parametrize(
    "bad",
    [
        member("../escape"),
        member("out/../../escape"),
        member("/etc/escape"),
        member("out/link", tarfile.SYMTYPE, link="/etc/passwd"),
        member("out/hard", tarfile.LNKTYPE, link="out/x"),
        member("out/dev", tarfile.CHRTYPE),
    ],
)
def test_builder_output_refuses_anything_but_plain_files(tmp_path: Path, bad: tarfile.TarInfo) -> None:
    target = tmp_path / "ctx"
    target.mkdir()
    with pytest.raises(EnvironmentProblem, match="refusing to unpack"):
        extract_tar(tar_of((member("out/ok"), b"ok"), (bad, b"")), target)
    assert list(target.iterdir()) == []  # checked before anything is written
    assert not (tmp_path / "escape").exists()
