"""Mirror settings are checked before anything runs, from either source (the matrix's
`[registry.mirrors]`, ECOREADY_REGISTRY_MIRRORS), by one grammar: what is wrong is said
where it is (`file:line:col`, or the variable and its entry) and never with the value,
which may hold a password; the variable wins over the matrix for the same registry and the
verbs say so. The connections opened early never raise into a command: a name no codec
takes fails its asker at once (in-process: loopback only, no engine)."""

from __future__ import annotations

import argparse
import asyncio
import socket
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from ecoready.domain.errors import ConfigError, RegistryError, UsageError
from ecoready.matrix.document import Mirror, RegistrySettings
from ecoready.matrix.load import load, parse
from ecoready.matrix.mirrors import override_notes, with_environment
from ecoready.registry import early
from ecoready.registry.client import RegistryClient
from ecoready.registry.credentials import DockerCredentials
from ecoready.ui.args import load_matrix
from ecoready.ui.cli import main

SECRET = "s3cret-Pa55"
LABEL_64 = "a" * 64
ROW = '[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\n'

# (entry, where it is wrong, words of what is wrong); none of them may be repeated
BAD: list[tuple[str, str, str]] = [
    (f"docker.io=user:{SECRET}@mirror.example:5000", "entry 1: the mirror", "holds credentials"),
    (f"docker.io=https://user:{SECRET}@m.example", "entry 1: the mirror", "holds credentials"),
    (f"user:{SECRET}@docker.io=m.example", "entry 1: the registry", "holds credentials"),
    (f"docker.io={LABEL_64}.example:5000", "entry 1: the mirror", "of 64 characters; at most 63"),
    (f"docker.io=m.example, ghcr.io={'b' * 5000}", "entry 2: the mirror", "of 5000 characters; at most 253"),
    (f"docker.io=mirror.{'c' * 5000}.example", "entry 1: the mirror", "at most 253"),
    ("dock\x7fer.io=m.example", "entry 1: the registry", "control or invisible character (\\x7f) at character 5"),
    ("docker.io=m.example\x1b[31m", "entry 1: the mirror", "(\\x1b) at character 10"),
    ("docker.io=m.exa\x85mple", "entry 1: the mirror", "(\\x85) at character 6"),
    ("docker.io=m.example\x85", "entry 1: the mirror", "(\\x85) at character 10"),  # C1 NEL: Python strips it
    ("ghcr.io=g.example,docker.io=a.example,index.docker.io=b.example", "entry 3", "the same registry as entry 2"),
    ("docker.io=", "entry 1: the mirror", "is empty"),
    (f"docker.io=u:{SECRET}@m.example,docker.io=n.example", "entry 2", "the same registry as entry 1"),
    ("docker.io=a.example,,ghcr.io=g.example", "entry 2", "is empty"),
    ("docker.io", "entry 1", "is not REGISTRY=HOST[:PORT][/PREFIX] (no '=')"),
    ("docker.io=::1:5000", "entry 1: the mirror", "an IPv6 address without brackets"),
    ("docker.io=[::g]:5000", "entry 1: the mirror", "not a well-formed IPv6 address"),
    ("docker.io=m.example:0", "entry 1: the mirror", "a port that is not a number from 1 to 65535"),
    ("docker.io=m.example:99999", "entry 1: the mirror", "a port that is not a number"),
    ("docker.io=mïrror.example", "entry 1: the mirror", "xn-- (punycode) form"),
    ("docker.io=300.1.1.1", "entry 1: the mirror", "is not an IPv4 address"),
    ("docker.io=m.example/Hub", "entry 1: the mirror", "prefix whose part 1 is not lower-case"),
    ("docker.io=-m.example", "entry 1: the mirror", "not letters, digits and inner hyphens"),
]


def _value_of(entry: str) -> str:
    return entry.split("=", 1)[1] if "=" in entry else entry


@pytest.mark.parametrize(("entry", "where", "words"), BAD, ids=[f"env-{i}" for i in range(len(BAD))])
def test_a_bad_variable_entry_is_refused_naming_the_variable_and_entry_never_the_value(
    entry: str, where: str, words: str
) -> None:
    with pytest.raises(UsageError) as caught:
        with_environment(RegistrySettings(), {"ECOREADY_REGISTRY_MIRRORS": entry})
    said = str(caught.value)
    assert f"ECOREADY_REGISTRY_MIRRORS: {where}" in said and words in said, said
    assert caught.value.exit_code == 2
    assert SECRET not in said and "b" * 70 not in said and LABEL_64 not in said
    assert "\x1b" not in said and "\x7f" not in said and "\x85" not in said  # nothing that acts on a terminal
    value = _value_of(entry)
    assert not value or value not in said


# (the table's line, where the problem is said: line, col; words)
MATRIX_BAD: list[tuple[str, tuple[int, int], str]] = [
    (f'"docker.io" = "user:{SECRET}@m.example:5000"', (3, 15), "the mirror holds credentials"),
    (f'"docker.io" = "{LABEL_64}.example"', (3, 15), "of 64 characters; at most 63"),
    (f'"docker.io" = "{"d" * 5000}"', (3, 15), "of 5000 characters; at most 253"),
    ('"docker.io" = ""', (3, 15), "the mirror is empty"),
    (f'"user:{SECRET}@docker.io" = "m.example"', (3, 1), "a key of 'registry.mirrors': the registry holds credentials"),
    ('"docker.io" = "a.example"\n"Index.Docker.io" = "b.example"', (4, 21), "names the registry docker.io, as another"),
    ('"docker.io" = "m.example\\u001b[2J"', (3, 15), "contains"),  # the matrix's own check of every string
    ('"docker.io" = "m.example\\u0085"', (3, 15), "contains"),
    ('"dock\\u007fer.io" = "m.example"', (3, 1), "a key of 'registry.mirrors' contains"),
]


@pytest.mark.parametrize(("table", "at", "words"), MATRIX_BAD, ids=[f"matrix-{i}" for i in range(len(MATRIX_BAD))])
def test_a_bad_matrix_mirror_is_refused_at_its_position_never_with_its_value(
    table: str, at: tuple[int, int], words: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(f"[registry.mirrors]\n# mirrors\n{table}\n" + ROW, "m.toml")
    found = [(p.line, p.col, p.message) for p in caught.value.problems]
    assert [(line, col) for line, col, message in found if words in message] == [at], found
    said = str(caught.value)
    assert SECRET not in said and LABEL_64 not in said and "d" * 64 not in said and "\x1b" not in said
    assert said.startswith(f"m.toml:{at[0]}:{at[1]}: ")


def test_well_formed_ipv6_literals_and_ports_are_accepted_from_either_source() -> None:
    env = {"ECOREADY_REGISTRY_MIRRORS": "docker.io=[::1]:5000/hub, [2001:db8::1]:443=[fe80::1]"}
    settings = with_environment(RegistrySettings(), env)
    assert set(settings.mirrors) == {Mirror("docker.io", "[::1]:5000", "hub"), Mirror("[2001:db8::1]:443", "[fe80::1]")}
    matrix = parse('[registry.mirrors]\n"docker.io" = "[::1]:5000/hub"\n' + ROW, "m.toml")
    assert matrix.registry.mirrors == (Mirror("docker.io", "[::1]:5000", "hub"),)
    assert early.endpoint_of("[::1]:5000", ()) == ("::1", 5000)


def test_insecure_hosts_and_fallback_are_checked_too_without_their_values() -> None:
    env = {"ECOREADY_REGISTRY_INSECURE": f"ok.example:5000,u:{SECRET}@h", "ECOREADY_REGISTRY_FALLBACK": SECRET}
    with pytest.raises(UsageError) as caught:
        with_environment(RegistrySettings(), env)
    said = str(caught.value)
    assert "ECOREADY_REGISTRY_INSECURE: entry 2: the host holds credentials" in said
    assert "ECOREADY_REGISTRY_FALLBACK: is neither true nor false" in said and SECRET not in said
    with pytest.raises(ConfigError) as matrix:
        parse(f'[registry]\ninsecure = ["ok:5000", "{LABEL_64}.example"]\n' + ROW, "m.toml")
    assert "m.toml:2:24: 'registry.insecure' entry 2 has a label" in str(matrix.value)


def test_the_variable_wins_over_the_matrix_and_the_verbs_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.toml"
    path.write_text('[registry.mirrors]\n"docker.io" = "old.example"\n"ghcr.io" = "g.example"\n' + ROW)
    env = {"ECOREADY_REGISTRY_MIRRORS": "docker.io=new.example/hub,ghcr.io=g.example,quay.io=q.example"}
    settings = load(path, env).registry
    assert Mirror("docker.io", "new.example", "hub") in settings.mirrors
    assert settings.replaced == (Mirror("docker.io", "old.example"),)  # the same ghcr.io mirror replaces nothing
    (note,) = override_notes(settings)
    assert note == (
        "ECOREADY_REGISTRY_MIRRORS sets the mirror of docker.io (new.example/hub); the matrix's (old.example) "
        "is not used: the variable wins"
    )
    assert override_notes(load(path, {}).registry) == []
    monkeypatch.setenv("ECOREADY_REGISTRY_MIRRORS", env["ECOREADY_REGISTRY_MIRRORS"])
    load_matrix(argparse.Namespace(matrix=str(path)))  # how every verb reads its matrix
    assert capsys.readouterr().err == f"ecoready: note: {note}\n"


def test_every_verb_stops_on_a_bad_variable_with_exit_2_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.toml"
    path.write_text('profile = "smoke"\n' + ROW)
    monkeypatch.setenv("ECOREADY_REGISTRY_MIRRORS", f"docker.io=u:{SECRET}@{LABEL_64}.example")
    started = time.monotonic()
    assert main(["images", "--matrix", str(path)]) == 2
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "ecoready: error: ECOREADY_REGISTRY_MIRRORS: entry 1: the mirror holds credentials" in err
    assert SECRET not in err and LABEL_64 not in err and "Traceback" not in err
    assert time.monotonic() - started < 5


def test_a_connection_opened_early_settles_whatever_fails() -> None:
    future: Future[socket.socket] = Future()
    early._connect((f"{LABEL_64}.example", 443), 1.0, future)  # the IDNA codec refuses it: UnicodeError
    assert isinstance(future.exception(timeout=0), UnicodeError)


async def test_a_name_the_codec_refuses_fails_its_asker_at_once_never_the_run(tmp_path: Path) -> None:
    host = f"{LABEL_64}.example"  # a mirror set past the checks, or an image's own registry
    mirrors = (Mirror("docker.io", host),)
    opened = early.open_early(["mysql:8.4", f"{host}/x:1"], mirrors=mirrors, insecure=(host,))
    started = time.monotonic()
    client = RegistryClient(
        mirrors=mirrors, insecure=(host,), cache=False, early=opened, credentials=DockerCredentials(tmp_path / "n.json")
    )
    async with client as c:
        outcomes = await asyncio.gather(
            c.resolve("mysql:8.4", "arm64"), c.resolve(f"{host}/x:1", "arm64"), return_exceptions=True
        )
    assert time.monotonic() - started < 5  # was: a traceback in the thread, then the 45 s request deadline
    for outcome in outcomes:
        assert isinstance(outcome, RegistryError) and "cannot resolve the name" in outcome.reason, outcome
    opened.close()
