"""`ecoready init` reads a compose file by compose's own rules, where a user relies on them:
`$$` is a literal `$`; `include:` files are followed (or each one said); a server's
`command:` options are carried into its row (the words that are none said); and a known
component under a vendor's other image name is known."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ecoready.stack.compose import parse_compose, read_compose
from ecoready.stack.known import known
from ecoready.stack.mapping import map_services
from tests.support.cli import ecoready


def test_a_double_dollar_is_a_literal_dollar_not_a_variable() -> None:
    text = textwrap.dedent(
        """\
        services:
          job:
            image: x/job:1
            command: ["sh", "-c", "echo $$HOME costs $$5"]
            environment:
              PRICE: "$$5"
              HOME_DIR: "${HOME_DIR:-/srv}"
              REGION: "${REGION}"
        """
    )
    _, (job,) = parse_compose(text, "c.yml")
    assert job.command == ("sh", "-c", "echo $HOME costs $5")
    assert job.environment == {"PRICE": "$5", "HOME_DIR": "/srv"}
    assert not any("`command`" in note for note in job.notes), job.notes
    assert "`REGION` needs variables from the shell or .env: left out" in job.notes
    mapped = map_services([job])
    assert mapped.rows[0].options["env"] == {"PRICE": "$5", "HOME_DIR": "/srv"}


def test_include_files_are_followed_relative_to_the_including_file(tmp_path: Path) -> None:
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "compose.yml").write_text(
        "include: [../nested.yml]\nservices:\n  db:\n    image: mysql:8.4\n    expose: ['3306']\n"
    )
    (tmp_path / "nested.yml").write_text("services:\n  cache:\n    image: redis:7\n")
    main = tmp_path / "compose.yml"
    main.write_text(
        textwrap.dedent(
            """\
            name: shop
            include:
              - db/compose.yml
              - path: [db/compose.yml, override.yml]
              - ${EXTRA_FILE}
              - oci://registry.example/stack:1
            services:
              app:
                image: x/app:1
                depends_on: [db]
            """
        )
    )
    project, services, notes = read_compose(main)
    assert project == "shop"
    assert [s.name for s in services] == ["app", "db", "cache"]
    said = "\n".join(notes)
    assert "include override.yml: an override file: not read" in said
    assert "include db/compose.yml: included already" in said
    assert "include ${EXTRA_FILE}: needs variables from the shell or .env: not followed" in said
    assert "include oci://registry.example/stack:1: a remote file: not followed" in said
    rows = {r.service: r for r in map_services(services).rows}
    assert rows["app"].backend == "db"  # the backend came from an included file


def test_an_included_file_that_cannot_be_read_is_said_with_its_path(tmp_path: Path) -> None:
    main = tmp_path / "compose.yml"
    main.write_text("include: [absent.yml]\nservices:\n  a:\n    image: x/a:1\n")
    result = ecoready("init", "--from", str(main), "-o", str(tmp_path / "m.toml"), timeout=60)
    assert result.returncode == 2
    assert f"{tmp_path / 'absent.yml'}:1:1: cannot read: no such file" in result.stderr


def test_init_prints_what_it_did_not_follow(tmp_path: Path) -> None:
    main = tmp_path / "compose.yml"
    main.write_text("include: [{path: [b.yml, c.yml]}]\n")
    (tmp_path / "b.yml").write_text("services:\n  db:\n    image: mariadb:11.4\n")
    result = ecoready("init", "--from", str(main), "-o", str(tmp_path / "m.toml"), timeout=60)
    assert result.returncode == 0, result.stderr
    assert "include c.yml: an override file: not read" in result.stderr
    assert 'image = "mariadb:11.4"' in (tmp_path / "m.toml").read_text()


@pytest.mark.parametrize(
    ("command", "args", "dropped"),
    [
        (
            "--max-connections=500 --character-set-server=utf8mb4",
            ["--max-connections=500", "--character-set-server=utf8mb4"],
            "",
        ),
        ("mysqld --max-connections 500 --skip-name-resolve", ["--max-connections=500", "--skip-name-resolve"], ""),
        (
            "/usr/sbin/mariadbd --innodb-buffer-pool-size=1G extra",
            ["--innodb-buffer-pool-size=1G"],
            "db: `command:` words that are no server option, dropped: extra",
        ),
        ("sh -c 'sleep 1'", None, "dropped: sh -c sleep 1"),
    ],
)
def test_a_servers_command_options_are_carried_into_its_row(command: str, args: list[str] | None, dropped: str) -> None:
    text = f"services:\n  db:\n    image: mysql:8.4\n    command: {command}\n"
    _, services = parse_compose(text, "c.yml")
    mapped = map_services(services)
    assert mapped.rows[0].options.get("args") == args
    if dropped:
        assert any(dropped in line for line in mapped.undecided), mapped.undecided
    else:
        assert not any("command" in line for line in mapped.undecided), mapped.undecided


@pytest.mark.parametrize(
    ("image", "probe", "what"),
    [
        ("bitnami/mysql:8.4", "server", "MySQL server"),
        ("percona/percona-server:8.0", "server", "Percona Server"),
        ("mysql/mysql-server:8.0", "server", "MySQL server"),
        ("container-registry.oracle.com/mysql/community-server:9.1", "server", "MySQL server (Oracle's registry)"),
        ("percona/proxysql2:2.7.1", "proxysql", "ProxySQL"),
        ("percona/proxysql3:3.0.1", "proxysql", "ProxySQL"),
        ("percona/percona-xtradb-cluster-operator:1.15.0-proxysql", "proxysql", "ProxySQL"),
        ("percona/percona-xtradb-cluster-operator:1.15.0-haproxy", "haproxy", "HAProxy in front of MySQL"),
        ("quay.io/mariadb-foundation/mariadb-devel:11.8", "server", "MariaDB server"),
    ],
)
def test_a_component_is_known_under_its_vendors_other_names(image: str, probe: str, what: str) -> None:
    found = known(image)
    assert found is not None and (found.probe, found.what) == (probe, what)


def test_an_operator_image_without_a_component_tag_is_not_guessed() -> None:
    assert known("percona/percona-xtradb-cluster-operator:1.15.0") is None


PROXIED_APP = """\
services:
  db:
    image: mysql:9.7
    environment: {{ MYSQL_DATABASE: shop, MYSQL_USER: shop }}
  proxy:
    image: {proxy}
    depends_on: [db]{ports}
  app:
    image: example/shop:1
    depends_on: [proxy]
    environment:
      DB_HOST: proxy
      DB_PORT: "{port}"
      DB_URL: mysql://shop@proxy:{port}/shop
      DB_ADDR: proxy:{port}
"""


@pytest.mark.parametrize(
    ("proxy", "port", "ports"),
    [
        ("proxysql/proxysql:3.0.1", 6033, ""),  # ProxySQL's default client port, not published
        ("mariadb/maxscale:24.02", 4006, ""),
        ("container-registry.oracle.com/mysql/community-router:9.7", 6446, ""),
        ("haproxy:3.2", 13306, "\n    expose: ['13306']"),  # HAProxy's own listener, from the file
    ],
)
def test_an_apps_port_of_the_proxy_is_rewritten_with_its_host(proxy: str, port: int, ports: str) -> None:
    """The app is checked against the server directly ({host} is the server): the proxy's
    port beside it would make it connect to `server:6033`, so it becomes {port} too."""
    _, services = parse_compose(PROXIED_APP.format(proxy=proxy, port=port, ports=ports), "c.yml")
    mapped = map_services(services)
    app = next(r for r in mapped.rows if r.id == "app")
    assert app.options["env"] == {
        "DB_HOST": "{host}",
        "DB_PORT": "{port}",
        "DB_URL": "mysql://{user}@{host}:{port}/{database}",
        "DB_ADDR": "{host}:{port}",
    }
    assert not any("DB_PORT" in line for line in mapped.undecided), mapped.undecided


def test_an_apps_port_ecoready_cannot_place_is_kept_and_said() -> None:
    text = (
        "services:\n  db:\n    image: mysql:9.7\n  app:\n    image: example/shop:1\n    depends_on: [db]\n"
        "    environment: { DB_HOST: db, DB_PORT: '7000' }\n"
    )
    _, services = parse_compose(text, "c.yml")
    mapped = map_services(services)
    app = next(r for r in mapped.rows if r.id == "app")
    assert app.options["env"] == {"DB_HOST": "{host}", "DB_PORT": "7000"}
    assert any("app: `DB_PORT` = 7000 is not a port ecoready knows of db" in line for line in mapped.undecided)
