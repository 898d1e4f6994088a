"""Config validation: every error names file:line:col and the key; never a traceback."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ecoready.domain.errors import ConfigError
from ecoready.domain.model import Category, Profile
from ecoready.matrix.load import MAX_MATRIX_BYTES, load, parse

ROOT = Path(__file__).resolve().parents[2]

GOOD = textwrap.dedent("""\
    title = "t"
    arches = ["amd64", "aarch64"]
    profile = "smoke"

    [[components]]
    id = "db"
    category = "server"
    probe = "server"
    image = "127.0.0.1:5000/lab/mariadb:10.11"

    [components.options]
    args = ["--innodb-buffer-pool-size=64M"]
""")


def problems(text: str) -> list[tuple[int, int, str]]:
    with pytest.raises(ConfigError) as info:
        parse(text, "m.toml")
    return [(p.line, p.col, p.message) for p in info.value.problems]


def test_good_matrix_parses() -> None:
    matrix = parse(GOOD, "m.toml")
    assert matrix.arches == ("amd64", "arm64")  # aarch64 normalised
    assert matrix.profile is Profile.SMOKE
    (db,) = matrix.components
    assert db.category is Category.SERVER and db.options["args"] == ["--innodb-buffer-pool-size=64M"]


@pytest.mark.parametrize(
    ("text", "line", "col", "words"),
    [
        # syntax: an unterminated string on line 3
        ('title = "t"\narches = ["amd64"]\nprofile = "smoke\n', 3, None, "TOML syntax error"),
        # unknown top-level key with a did-you-mean, at the key
        (
            'titel = "x"\n[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\n',
            1,
            1,
            "unknown key 'titel' (did you mean 'title'?)",
        ),
        # wrong type, at the value
        (
            'arches = "amd64"\n[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\n',
            1,
            10,
            "'arches' must be an array",
        ),
        # unknown probe kind, second component, at the value
        (
            '[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\n'
            '[[components]]\nid="b"\ncategory="server"\nprobe="sever"\nimage="x:1"\n',
            9,
            7,
            "unknown probe kind 'sever' (did you mean 'server'?)",
        ),
        # missing required key: points at the [[components]] header
        (
            'title = "t"\n\n[[components]]\nid="a"\ncategory="server"\nprobe="server"\n',
            3,
            1,
            "missing required key 'components[0].image'",
        ),
        # a backend that does not exist
        (
            '[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\nbackend = "nope"\n',
            6,
            11,
            "backend 'nope' of 'a' is not a component",
        ),
        # unknown arch inside a list
        (
            'arches = ["amd64", "sparc"]\n[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\n',
            1,
            20,
            "unknown architecture 'sparc'",
        ),
        # duplicate id
        (
            '[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\n'
            '[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\n',
            7,
            4,
            "component id 'a' is used twice",
        ),
        # bool where a number is expected, in a sub-table
        (
            '[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\ntimeout = true\n',
            6,
            11,
            "'components[0].timeout' must be an integer or a number, not true or false",
        ),
        # unknown option key for the probe kind, in [components.options]
        (
            '[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\n[components.options]\nflavour="x"\n',
            7,
            1,
            "unknown key 'components[0].options.flavour' (did you mean 'flavor'?)",
        ),
        # a category that does not exist
        (
            '[[components]]\nid="a"\ncategory="servr"\nprobe="server"\nimage="x:1"\n',
            3,
            10,
            "unknown category 'servr' (did you mean 'server'?)",
        ),
    ],
)
def test_malformed_files_name_line_column_and_key(text: str, line: int, col: int | None, words: str) -> None:
    found = problems(text)
    assert any(words in message for _, _, message in found), found
    match = next(p for p in found if words in p[2])
    assert match[0] == line, found
    if col is not None:
        assert match[1] == col, found


def test_backend_cycle_is_reported() -> None:
    text = (
        '[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\nbackend="b"\n'
        '[[components]]\nid="b"\ncategory="server"\nprobe="server"\nimage="x:1"\nbackend="a"\n'
    )
    found = problems(text)
    assert any("backend cycle: a -> b -> a" in m for _, _, m in found), found


def test_all_problems_are_reported_at_once() -> None:
    text = 'titel = 1\nprofile = "fast"\n[[components]]\nid="A b"\ncategory="server"\nprobe="server"\nimage="x:1"\n'
    found = problems(text)
    assert len(found) == 3
    assert [line for line, _, _ in found] == [1, 2, 4]


def test_end_of_file_error_has_a_position() -> None:
    found = problems('arches = ["amd64",\n')
    assert found[0][0] >= 1 and "TOML syntax error" in found[0][2]


def test_binary_and_oversized_files_are_refused(tmp_path: Path) -> None:
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b'title = "x"\n\x00\x01\x02')
    with pytest.raises(ConfigError) as info:
        load(binary)
    assert str(info.value).startswith(f"{binary}:2:1: binary data")
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * MAX_MATRIX_BYTES)
    with pytest.raises(ConfigError) as info:
        load(big)
    assert "is at most" in str(info.value)
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'title = "caf\xe9"\n')
    with pytest.raises(ConfigError, match=r"latin\.toml:1:13: not valid UTF-8"):
        load(latin)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load(tmp_path / "nope.toml")


# matrix.toml: tests/unit/test_matrix_coverage.py (some of its probe kinds are still pending)
@pytest.mark.parametrize("name", ["containers/lab.toml"])
def test_shipped_matrices_validate(name: str) -> None:
    matrix = load(ROOT / name)
    assert matrix.components


def test_option_values_are_checked_against_the_kind_choices() -> None:
    found = problems(
        '[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\n[components.options]\nflavor="oracle"\n'
    )
    assert (7, 8, "unknown flavor 'oracle' for probe 'server' (one of mariadb, mysql, percona)") in found


ROW = '[[components]]\nid="a"\ncategory="server"\nprobe="server"\nimage="x:1"\n'


def test_registry_mirrors_per_registry_host_and_prefix_style() -> None:
    from ecoready.matrix.document import Mirror

    matrix = parse(
        '[registry]\nmirror = "all.example"\nfallback = true\n\n[registry.mirrors]\n'
        '"index.docker.io" = "harbor.example/dockerhub-proxy/"\n'
        '"container-registry.oracle.com" = "art.example/oracle-remote"\n\n' + ROW,
        "m.toml",
    )
    assert matrix.registry.fallback is True
    assert set(matrix.registry.mirrors) == {
        Mirror("*", "all.example"),
        Mirror("docker.io", "harbor.example", "dockerhub-proxy"),  # Docker Hub's other names are docker.io
        Mirror("container-registry.oracle.com", "art.example", "oracle-remote"),
    }


@pytest.mark.parametrize(
    ("table", "line", "col", "words"),
    [
        ('"docker.io" = "https://m.example"', 4, 15, "has a scheme: write host[:port] alone"),
        ('"docker.io" = 5', 4, 15, "must be a string host[:port][/prefix]"),
        ('"docker.io" = "m.example//x"', 4, 15, "a prefix whose part 1 is empty"),
        ('"docker.io" = "m.example/Hub"', 4, 15, "not lower-case letters and digits"),
        ('"*" = "m.example"', 4, 7, "names the registry *, as 'registry.mirror' does"),
    ],
)
def test_bad_mirrors_are_said_at_their_value(table: str, line: int, col: int, words: str) -> None:
    found = problems(f'[registry]\nmirror = "all.example"\n[registry.mirrors]\n{table}\n' + ROW)
    assert [(at_line, at_col) for at_line, at_col, message in found if words in message] == [(line, col)], found


def test_the_environment_sets_mirrors_fallback_and_insecure_hosts(tmp_path: Path) -> None:
    from ecoready.domain.errors import UsageError
    from ecoready.matrix.document import Mirror

    path = tmp_path / "m.toml"
    path.write_text('[registry.mirrors]\n"docker.io" = "old.example"\n"ghcr.io" = "g.example/gh"\n' + ROW)
    env = {
        "ECOREADY_REGISTRY_MIRRORS": "docker.io=mirror.local:5000/hub, quay.io=q.example",
        "ECOREADY_REGISTRY_FALLBACK": "true",
        "ECOREADY_REGISTRY_INSECURE": "mirror.local:5000",
    }
    registry = load(path, env).registry
    assert set(registry.mirrors) == {
        Mirror("docker.io", "mirror.local:5000", "hub"),  # the environment's wins
        Mirror("ghcr.io", "g.example", "gh"),
        Mirror("quay.io", "q.example"),
    }
    assert registry.fallback is True and registry.insecure == ("mirror.local:5000",)
    assert load(path, {}).registry.fallback is False
    for bad, words in (
        ({"ECOREADY_REGISTRY_MIRRORS": "docker.io"}, "entry 1 is not REGISTRY=HOST[:PORT][/PREFIX] (no '=')"),
        ({"ECOREADY_REGISTRY_MIRRORS": "docker.io=a b"}, "entry 1: the mirror holds whitespace"),
        ({"ECOREADY_REGISTRY_FALLBACK": "maybe"}, "ECOREADY_REGISTRY_FALLBACK: is neither true nor false"),
    ):
        with pytest.raises(UsageError, match="ECOREADY_REGISTRY") as caught:
            load(path, bad)
        assert words in str(caught.value)
