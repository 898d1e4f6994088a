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
from ecoready.lab.build import extract_tar
from ecoready.lab.recipes import IMAGES, builder_named
from ecoready.matrix.kinds import CONNECTOR_LANGUAGES, KINDS, SMOKE_DRIVERS
from ecoready.matrix.load import parse
from ecoready.probes.connector import CHECKS, PASSWORD_PATH, PROGRAMS, parse_lines, smoke_argv, unreported

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
