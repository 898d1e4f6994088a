"""`ecoready init`: compose files read as compose reads them (the shapes of the compose
specification), services mapped onto probes with backends and reasons, secrets never
written, and the TOML it writes reading back as the same text whatever the names hold."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecoready.domain.errors import ConfigError
from ecoready.domain.model import Category
from ecoready.domain.specs import RunningContainer
from ecoready.domain.text import shown
from ecoready.matrix.load import load, parse
from ecoready.stack.compose import MAX_COMPOSE_BYTES, parse_compose, read_compose
from ecoready.stack.mapping import Row, map_services, row_id
from ecoready.stack.services import COMPOSE_DEPENDS_ON, COMPOSE_SERVICE, Service, from_containers, from_images
from ecoready.stack.toml_out import comment, matrix_text, toml_key, toml_string
from tests.support.cli import ecoready

SHOP = textwrap.dedent(
    """\
    name: shop
    services:
      db:
        image: mariadb:10.11
        platform: linux/amd64
        environment:
          MARIADB_ROOT_PASSWORD: root-secret-1
          MARIADB_DATABASE: shop
          MARIADB_USER: shop
          MARIADB_PASSWORD: shop-secret-2
        command: --character-set-server=utf8mb4 --max-connections=500
      lb:
        image: haproxy:2.9
        depends_on: [db]
      app:
        image: ghcr.io/acme/shop-app:1.4
        platform: linux/amd64
        depends_on:
          lb:
            condition: service_started
        environment:
          - DB_HOST=lb
          - DB_PORT=3306
          - DB_USER=shop
          - DB_NAME=shop
          - DB_PASSWORD=shop-secret-2
          - DB_PASSWORD_FILE=/run/secrets/db
          - DATABASE_URL=mysql://shop@lb:3306/shop?tls=false
          - OTHER_URL=mysql://shop:shop-secret-3@db/shop
          - LOG_LEVEL=${LOG_LEVEL:-info}
          - REGION=${REGION}
          - FROM_SHELL
        healthcheck:
          test: curl -fsS http://localhost:8080/health
        ports: ["127.0.0.1:18080:8080"]
      migrate:
        image: ghcr.io/acme/shop-migrate:1.4
        command: ["migrate", "--to", "latest"]
        environment: { DATABASE: db }
      backup:
        image: percona/percona-xtrabackup:8.0
      cache:
        image: redis:7
        expose: ["6379"]
      web:
        build: ./web
        ports: [{target: 80, published: 8081, protocol: tcp}]
    """
)


def rows_of(text: str) -> dict[str, Row]:
    _, services = parse_compose(text, "compose.yml")
    return {row.id: row for row in map_services(services).rows}


def test_compose_shapes_are_read() -> None:
    project, services = parse_compose(SHOP, "compose.yml")
    by = {s.name: s for s in services}
    assert project == "shop"
    assert by["db"].platform == "linux/amd64"
    assert by["db"].command == ("--character-set-server=utf8mb4", "--max-connections=500")
    assert by["app"].depends_on == ("lb",) and by["lb"].depends_on == ("db",)
    assert by["app"].environment["LOG_LEVEL"] == "info"  # ${VAR:-default}
    assert "REGION" not in by["app"].environment  # compose's to fill: left out and said
    assert "`REGION` needs variables from the shell or .env: left out" in by["app"].notes
    assert "FROM_SHELL" not in by["app"].environment
    assert any("FROM_SHELL" in n for n in by["app"].notes)
    assert by["app"].healthcheck == ("CMD-SHELL", "curl -fsS http://localhost:8080/health")
    assert by["app"].ports == (8080,) and by["cache"].ports == (6379,) and by["web"].ports == (80,)
    assert by["migrate"].command == ("migrate", "--to", "latest")
    assert by["web"].built and by["web"].image == "shop-web"


def test_known_images_get_their_probe_and_backends_follow_depends_on_and_the_environment() -> None:
    rows = rows_of(SHOP)
    db = rows["db"]
    assert (db.probe, db.category, db.options["flavor"]) == ("server", Category.SERVER, "mariadb")
    assert rows["db"].options["args"] == ["--character-set-server=utf8mb4", "--max-connections=500"]
    assert rows["db"].platform == "linux/amd64" and rows["db"].backend == ""
    assert (rows["lb"].probe, rows["lb"].backend) == ("haproxy", "db")
    assert (rows["backup"].probe, rows["backup"].backend) == ("xtrabackup", "db")
    assert any("only MySQL server" in w for w in rows["backup"].why)
    app = rows["app"]
    assert (app.probe, app.category, app.backend) == ("command", Category.APP, "db")
    assert any("lb, which fronts db" in w for w in app.why)
    assert app.options["mode"] == "service" and app.options["port"] == 8080
    assert app.options["healthcheck"] == ["CMD-SHELL", "curl -fsS http://localhost:8080/health"]
    assert app.options["env"] == {
        "DB_HOST": "{host}",
        "DB_PORT": "{port}",
        "DB_USER": "{user}",
        "DB_NAME": "{database}",
        "DB_PASSWORD_FILE": "{password_file}",
        "DATABASE_URL": "mysql://{user}@{host}:{port}/{database}?tls=false",
        "LOG_LEVEL": "info",
    }
    assert app.options["database"] == "shop"
    migrate = rows["migrate"]
    assert (migrate.options["mode"], migrate.backend) == ("run", "db")
    assert migrate.options["command"] == ["migrate", "--to", "latest"]
    assert migrate.options["env"] == {"DATABASE": "{host}"}
    assert (rows["cache"].probe, rows["cache"].backend, rows["cache"].options["port"]) == ("command", "", 6379)


def test_what_is_written_validates_and_holds_no_secret(tmp_path: Path) -> None:
    _, services = parse_compose(SHOP, "compose.yml")
    mapped = map_services(services)
    text = matrix_text("shop", ("amd64", "arm64"), mapped.rows, ("header",))
    matrix = parse(text, "written.toml")
    assert [c.id for c in matrix.components] == ["db", "lb", "app", "migrate", "backup", "cache", "web"]
    for secret in ("root-secret-1", "shop-secret-2", "shop-secret-3"):
        assert secret not in text
        assert not any(secret in line for line in mapped.undecided)
    said = "\n".join(mapped.undecided)
    assert "app: `DB_PASSWORD` holds a secret: not written" in said
    assert "app: `OTHER_URL` holds a secret" in said
    assert "app: `REGION` needs variables from the shell or .env" in said
    assert "web: built from source" in said
    assert "migrate: no ports, expose or healthcheck" in said


def test_a_proxy_without_a_mysql_server_is_a_plain_service() -> None:
    rows = rows_of("services:\n  edge:\n    image: haproxy:2.9\n    ports: ['443:8443']\n")
    edge = rows["edge"]
    assert (edge.probe, edge.options["mode"], edge.options["port"]) == ("command", "service", 8443)


def test_values_with_braces_are_left_out_rather_than_read_as_placeholders() -> None:
    rows = rows_of("services:\n  a:\n    image: x/a:1\n    command: ['--fmt={json}']\n    environment: {T: '{x}'}\n")
    assert "command" not in rows["a"].options and "env" not in rows["a"].options


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("services: [", "YAML:"),
        ("version: '3'\n", "no `services:` mapping"),
        ("services:\n  a: {image: [1, 2]}\n", None),  # noted, not fatal
        ("- just\n- a list\n", "no `services:` mapping"),
    ],
)
def test_not_a_compose_file(text: str, words: str | None) -> None:
    if words is None:
        _, services = parse_compose(text, "c.yml")
        assert services[0].image == "" and services[0].notes
        return
    with pytest.raises(ConfigError) as caught:
        parse_compose(text, "c.yml")
    problem = caught.value.problems[0]
    assert words in problem.message and problem.file == "c.yml"


def test_a_yaml_error_has_its_position() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_compose("services:\n  a:\n    image: [x\n  b: 1\n", "c.yml")
    assert caught.value.problems[0].line > 1


def test_aliases_that_grow_a_huge_tree_are_refused_where_they_grow() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    for n in "bcdefgh":
        prev = chr(ord(n) - 1)
        bomb += f"{n}: &{n} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
    text = "x-bomb:\n" + textwrap.indent(bomb, "  ") + "services:\n  s:\n    image: x/s:1\n    environment: *h\n"
    text += "    command: *h\n"
    with pytest.raises(ConfigError, match=r"^c\.yml:\d+:\d+: YAML: aliases here expand to more than 250000 values"):
        parse_compose(text, "c.yml")


def test_files_that_are_no_compose_file(tmp_path: Path) -> None:
    big = tmp_path / "big.yml"
    big.write_bytes(b"#" * (MAX_COMPOSE_BYTES + 1))
    binary = tmp_path / "bin.yml"
    binary.write_bytes(b"\xff\xfe\x00")
    for path, words in ((big, "larger than"), (binary, "not UTF-8"), (tmp_path / "none.yml", "no such file")):
        with pytest.raises(ConfigError, match=words):
            read_compose(path)


# -- hostile names round-trip through the TOML writer and `ecoready validate` -------------
HOSTILE = [
    'quote " and \\ backslash',
    "new\nline and\r\ncarriage",
    "tab\there, bell \x07, escape \x1b[31mred\x1b[0m, DEL \x7f, C1 \x9b",
    "]]\n[[components]]\nid = 'injected'",
    "# not a comment ''' \"\"\" ",
    "ünïcødé ✓ 🐬 中文",
    "lone \ud800 surrogate",
    "=",
    "",
]


def test_hostile_strings_survive_the_toml_writer() -> None:
    for text in HOSTILE:
        value = tomllib.loads(f"v = {toml_string(text)}\n")["v"]
        assert value == text.replace("\ud800", "\ufffd")
        line = comment(text)
        assert "\n" not in line and "\r" not in line and tomllib.loads(line + "\nv = 1\n") == {"v": 1}


def test_hostile_service_names_round_trip_through_validate(tmp_path: Path) -> None:
    services = [
        Service(
            name=name,
            image=f"registry.example/s{i}:1",
            environment={"NOTE": name, "DB_HOST": "db"} if name != "=" else {},
            command=(name, "--x") if name else (),
            platform="linux/amd64",
        )
        for i, name in enumerate(HOSTILE)
    ] + [Service(name="db", image="mysql:8.4")]
    mapped = map_services(services)
    out = tmp_path / "hostile.toml"
    out.write_text(matrix_text('title "with" \\ and\nnewline', ("amd64", "arm64"), mapped.rows, HOSTILE), "utf-8")
    result = ecoready("validate", str(out))
    assert result.returncode == 0, result.stderr
    matrix = load(out)
    rows = matrix.components[: len(HOSTILE)]
    # a matrix carries no character that acts: names come out shown escaped, values with one left out
    assert [c.name for c in rows] == [
        shown(n).replace("\ud800", "\ufffd") or c.id for n, c in zip(HOSTILE, rows, strict=True)
    ]
    assert "new\\x0aline" in rows[1].name and "NOTE" not in rows[1].options.get("env", {})
    assert "command" not in rows[2].options and matrix.title.startswith('title "with" \\ and\\x0anewline')
    assert len({c.id for c in matrix.components}) == len(HOSTILE) + 1
    assert not any(c.id == "injected" for c in matrix.components)
    first = matrix.components[0]
    assert first.options["env"]["NOTE"] == HOSTILE[0] and first.options["env"]["DB_HOST"] == "{host}"


def test_row_ids_are_valid_and_unique() -> None:
    taken: dict[str, int] = {}
    ids = [row_id(n, taken) for n in ["Web", "web", "WEB!", "-._", "a" * 80, "a" * 80, "ünï/cødé", "x y"]]
    assert ids[:3] == ["web", "web-2", "web-3"]
    assert ids[3] == "service" and len(ids[4]) == 63 and ids[5].endswith("-2") and len(ids[5]) == 63
    assert ids[6] == "n-c-d" and ids[7] == "x-y"


# -- other sources -------------------------------------------------------------------------
def test_image_lists_are_named_after_their_repository() -> None:
    services = from_images(["mysql:8.4", "127.0.0.1:5000/lab/mariadb:10.11", "ghcr.io/a/b@sha256:" + "0" * 64])
    assert [s.name for s in services] == ["mysql", "mariadb", "b"]
    twice = map_services(from_images(["mysql:8.4", "mysql:9.1", "mysql:8.4"]))
    assert [(r.id, r.name, r.image) for r in twice.rows] == [
        ("mysql", "mysql", "mysql:8.4"),
        ("mysql-2", "mysql-2", "mysql:9.1"),
        ("mysql-3", "mysql-3", "mysql:8.4"),
    ]


def test_running_containers_keep_their_compose_names_and_emulation_pins() -> None:
    containers = [
        RunningContainer("shop-db-1", "mariadb:10.11", "amd64", labels={COMPOSE_SERVICE: "db"}),
        RunningContainer(
            "shop-app-1",
            "ghcr.io/acme/app:1",
            "arm64",
            env={"DB_HOST": "db"},
            labels={COMPOSE_SERVICE: "app", COMPOSE_DEPENDS_ON: "db:service_started:false"},
            ports=(8080,),
        ),
        RunningContainer("loose", "sha256:" + "a" * 64, "amd64"),
        RunningContainer("shop-db-2", "mariadb:10.11", "amd64", labels={COMPOSE_SERVICE: "db"}),  # a replica
    ]
    services = from_containers(containers, native_arch="amd64")
    assert [(s.name, s.platform, s.depends_on) for s in services] == [
        ("db", "", ()),
        ("app", "linux/arm64", ("db",)),
        ("loose", "", ()),
    ]
    mapped = map_services(services)
    assert [r.id for r in mapped.rows] == ["db", "app"]
    assert "loose: sha256:" in mapped.undecided[-1] and "is an image id" in mapped.undecided[-1]
    assert any("by the engine, which runs it emulated" in w for w in mapped.rows[1].why)


# -- the verb ---------------------------------------------------------------------------------
def test_init_writes_a_matrix_that_validates_and_says_what_it_could_not_decide(tmp_path: Path) -> None:
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(SHOP)
    out = tmp_path / "matrix.toml"
    result = ecoready("init", "--from", str(compose), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "wrote" in result.stderr and "7 components" in result.stderr
    assert "not decided: app: `DB_PASSWORD` holds a secret" in result.stderr
    assert ecoready("validate", str(out)).returncode == 0
    text = out.read_text()
    assert "# db: mariadb:10.11 is MariaDB server: probe server" in text
    again = ecoready("init", "--from", str(compose), "-o", str(out))
    assert again.returncode == 2 and "--force" in again.stderr
    assert ecoready("init", "--from", str(compose), "-o", str(out), "--force").returncode == 0
    printed = ecoready("init", "--images", "mysql:8.4,ghcr.io/a/b:2", "-o", "-", "--arch", "arm64")
    assert printed.returncode == 0 and 'arches = ["arm64"]' in printed.stdout
    assert parse(printed.stdout, "stdout").arches == ("arm64",)


def test_init_needs_exactly_one_source_and_a_readable_file(tmp_path: Path) -> None:
    assert ecoready("init").returncode == 2
    assert ecoready("init", "--images", "a:1", "--from-host").returncode == 2
    missing = ecoready("init", "--from", str(tmp_path / "nope.yml"), "-o", str(tmp_path / "m.toml"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_init_is_light_without_from_host() -> None:
    code = (
        "import sys; from ecoready.ui import cli\n"
        "cli.main(['init', '--images', 'mysql:8.4', '-o', '-'])\n"
        "print('HEAVY=' + ','.join(m for m in ('docker', 'httpx', 'textual') if m in sys.modules), file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stderr.strip().splitlines()[-1] == "HEAVY="


# -- whatever the stack holds, what init writes validates ----------------------------------
_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=24) | st.sampled_from(
    ["db", "db:3306", "mysql://u@db:3306/shop", "{host}", "{nope}", "${X}", "3306", "shop", "root", "1"]
)
_images = st.sampled_from(["mysql:8.4", "mariadb:10.11", "haproxy:2.9", "proxysql/proxysql:2.7", "x/app:1"]) | _text
_services = st.lists(
    st.builds(
        Service,
        name=_text,
        image=_images,
        platform=st.sampled_from(["", "linux/amd64", "linux/arm64"]),
        depends_on=st.lists(st.sampled_from(["db", "app", "proxy"]) | _text, max_size=2).map(tuple),
        environment=st.dictionaries(_text, _text, max_size=4),
        command=st.lists(_text, max_size=3).map(tuple),
        healthcheck=st.sampled_from([(), ("CMD", "true"), ("CMD-SHELL", "exit 0")]),
        ports=st.lists(st.integers(1, 65535), max_size=2).map(tuple),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_services)
def test_whatever_the_services_hold_the_matrix_validates(services: list[Service]) -> None:
    mapped = map_services(services)
    if not mapped.rows:
        return
    parse(matrix_text("fuzz", ("amd64", "arm64"), mapped.rows, mapped.undecided), "fuzz.toml")


def test_a_key_with_a_trailing_newline_is_quoted() -> None:
    # hypothesis found it (an environment variable named "A\n"): `$` matches before a final newline
    assert tomllib.loads(f"t = {{ {toml_key('A' + chr(10))} = 1 }}")["t"] == {"A\n": 1}


TWO_SERVERS = textwrap.dedent(
    """\
    services:
      primary:
        image: mysql:8.4
        environment: {MYSQL_DATABASE: wp, MYSQL_USER: wp, MYSQL_PASSWORD: y}
      replica:
        image: mysql:8.4
      proxysql:
        image: proxysql/proxysql:2.7.1
      worker:
        image: ghcr.io/acme/worker:latest
        restart: always
      swarm-worker:
        image: ghcr.io/acme/worker:2
        deploy: {restart_policy: {condition: any}}
      once:
        image: ghcr.io/acme/migrate:2
        restart: "no"
      wordpress:
        image: wordpress:6.6
        ports: ["8080:80"]
        depends_on: [primary]
        environment:
          WORDPRESS_DB_HOST: primary:3306
          WORDPRESS_DB_USER: wp
          WORDPRESS_DB_PASSWORD: y
          WORDPRESS_DB_NAME: wp
      nextcloud:
        image: nextcloud:29
        depends_on: [primary]
        environment: {MYSQL_HOST: primary, MYSQL_PASSWORD: y, MYSQL_USER: wp}
    """
)


def mapped_two_servers() -> tuple[dict[str, Row], list[str]]:
    _, services = parse_compose(TWO_SERVERS, "compose.yml")
    mapped = map_services(services)
    return {row.id: row for row in mapped.rows}, list(mapped.undecided)


def test_a_proxy_among_several_servers_keeps_its_probe_and_asks_for_a_backend() -> None:
    rows, undecided = mapped_two_servers()
    proxy = rows["proxysql"]
    assert (proxy.probe, proxy.category, proxy.backend) == ("proxysql", Category.LOAD_BALANCER, "primary")
    assert any("2 servers (primary, replica): set `backend =`" in w for w in proxy.why)
    notes = [u for u in undecided if u.startswith("proxysql: ")]
    assert len(notes) == 1 and "set `backend =`" in notes[0]  # one note, not three


def test_a_daemon_with_a_restart_policy_is_a_service_not_a_command() -> None:
    rows, undecided = mapped_two_servers()
    assert rows["worker"].options["mode"] == "service"
    assert any("`restart: always`: a daemon" in w for w in rows["worker"].why)
    assert rows["swarm-worker"].options["mode"] == "service"
    assert rows["once"].options["mode"] == "run"  # `restart: "no"`: a job
    assert not any(u.startswith("worker: no ports") for u in undecided)


def test_a_floating_tag_is_said_at_init_time() -> None:
    _, undecided = mapped_two_servers()
    assert (
        "worker: ghcr.io/acme/worker:latest floats (latest): a run checks whatever it is that day; pin a version tag"
        in undecided
    )
    assert not any("swarm-worker: " in u and "floats" in u for u in undecided)


def test_images_that_read_file_variables_get_the_password_file() -> None:
    rows, undecided = mapped_two_servers()
    env = rows["wordpress"].options["env"]
    assert env == {
        "WORDPRESS_DB_HOST": "{host}:{port}",
        "WORDPRESS_DB_USER": "{user}",
        "WORDPRESS_DB_PASSWORD_FILE": "{password_file}",
        "WORDPRESS_DB_NAME": "{database}",
    }
    assert rows["nextcloud"].options["env"]["MYSQL_PASSWORD_FILE"] == "{password_file}"
    assert "MYSQL_PASSWORD" not in rows["nextcloud"].options["env"]  # the secret itself never written
    assert not any(u.startswith(("wordpress: ", "nextcloud: ")) and "secret" in u for u in undecided)


def test_init_of_two_servers_validates(tmp_path: Path) -> None:
    compose = tmp_path / "compose.yml"
    compose.write_text(TWO_SERVERS)
    out = tmp_path / "matrix.toml"
    result = ecoready("init", "--from", str(compose), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "worker: ghcr.io/acme/worker:latest floats (latest)" in result.stderr
    assert ecoready("validate", str(out)).returncode == 0
    assert load(str(out)).component("proxysql").backend == "primary"
