"""A user's own stack, end to end, as docs/own-stack.md walks through it: a compose file
(MariaDB pinned to linux/amd64, HAProxy in front of it, an app of ours that connects with
the environment it is given, and services whose images are published wrongly in the ways
real ones are) -> `ecoready init --from` -> a matrix that validates -> a run on amd64
(native) and arm64 (emulated) -> the migration plan: `ready`, `use TAG`, `upgrade to`,
`emulate`, `blocked`, and which `platform:` pins can go.

Also `ecoready init --from-host` on containers this test starts with compose's labels."""

from __future__ import annotations

import json
import subprocess
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ecoready.matrix.load import load
from tests.support.cli import TEST_LABEL_KEY, TEST_SESSION, ecoready

pytestmark = pytest.mark.docker

LAB = "127.0.0.1:5000/lab"
COMPOSE = textwrap.dedent(
    f"""\
    name: shop
    services:
      db:
        image: {LAB}/mariadb:10.11
        platform: linux/amd64
        environment:
          MARIADB_ROOT_PASSWORD: compose-root-secret
          MARIADB_DATABASE: shop
          MARIADB_USER: shop
          MARIADB_PASSWORD: compose-shop-secret
      proxy:
        image: {LAB}/haproxy:2.6
        depends_on: [db]
        ports: ["3306:3306"]
      app:
        image: {LAB}/app-client:1
        depends_on:
          proxy:
            condition: service_started
        environment:
          DB_HOST: proxy
          DB_PORT: "3306"
          DB_USER: shop
          DB_NAME: shop
          DB_PASSWORD_FILE: /run/secrets/db_password
        secrets: [db_password]
      # services whose images are published wrongly (app/lab/gaps.py), each a MariaDB
      legacy:
        image: {LAB}/gap-amd64-only:1
        platform: linux/amd64
        environment: {{ MARIADB_ALLOW_EMPTY_ROOT_PASSWORD: "1" }}
        healthcheck:
          test: ["CMD", "healthcheck.sh", "--connect"]
      reports:
        image: {LAB}/gap-upgrade:1
        platform: linux/amd64
        environment: {{ MARIADB_ALLOW_EMPTY_ROOT_PASSWORD: "1" }}
        expose: ["3306"]
      vendor:
        image: {LAB}/gap-suffix-only:1
        platform: linux/amd64
        environment: {{ MARIADB_ALLOW_EMPTY_ROOT_PASSWORD: "1" }}
        expose: ["3306"]
      armonly:
        image: {LAB}/gap-arm64-only:1
        environment: {{ MARIADB_ALLOW_EMPTY_ROOT_PASSWORD: "1" }}
        expose: ["3306"]
    secrets:
      db_password:
        file: ./db_password.txt
    """
)


@pytest.fixture(scope="module")
def stack(lab_gaps: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("own-stack")
    compose = work / "docker-compose.yml"
    compose.write_text(COMPOSE)
    matrix = work / "matrix.toml"
    init = ecoready("init", "--from", str(compose), "-o", str(matrix))
    out = work / "report.json"
    run = ecoready(
        "run", "--headless", "--matrix", str(matrix), "--json", str(out), "--md", str(work / "r.md"), timeout=2400
    )
    plan = ecoready("plan", str(out))
    return {
        "work": work,
        "init": init,
        "matrix": matrix,
        "run": run,
        "report": json.loads(out.read_text()),
        "markdown": (work / "r.md").read_text(),
        "plan": plan,
    }


def cells(stack: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in stack["report"]["cells"]}


def test_init_writes_a_matrix_that_validates(stack: dict[str, Any]) -> None:
    init = stack["init"]
    assert init.returncode == 0, init.stderr
    assert ecoready("validate", str(stack["matrix"])).returncode == 0
    matrix = load(stack["matrix"])
    rows = {c.id: c for c in matrix.components}
    assert {k: (c.probe, c.backend) for k, c in rows.items()} == {
        "db": ("server", None),
        "proxy": ("haproxy", "db"),
        "app": ("command", "db"),
        "legacy": ("command", None),
        "reports": ("command", None),
        "vendor": ("command", None),
        "armonly": ("command", None),
    }
    assert rows["app"].options["env"] == {
        "DB_HOST": "{host}",
        "DB_PORT": "{port}",
        "DB_USER": "{user}",
        "DB_NAME": "{database}",
        "DB_PASSWORD_FILE": "{password_file}",
    }
    assert rows["legacy"].options["healthcheck"] == ["CMD", "healthcheck.sh", "--connect"]
    assert (rows["reports"].options["mode"], rows["reports"].options["port"]) == ("service", 3306)
    text = stack["matrix"].read_text()
    assert "compose-root-secret" not in text and "compose-shop-secret" not in text
    assert "# app: 127.0.0.1:5000/lab/app-client:1 is not an image ecoready knows" in text
    assert "it talks to proxy in front of db: checked against db directly" in text
    assert "not decided: app: `secrets:` is not read" in init.stderr


def test_the_app_is_ready_on_both_arches_with_its_checks(stack: dict[str, Any], no_leaks: None) -> None:
    for arch in ("amd64", "arm64"):
        app = cells(stack)[f"app/{arch}"]
        assert app["status"] == "ready", (app["detail"], app["log_tail"][-10:])
        (smoke,) = [s for s in app["stages"] if s["stage"] == "smoke"]
        names = {k["name"]: k for k in smoke["checks"]}
        assert list(names) == ["env", "connect", "write", "read", "command"]
        assert "DB_NAME=shop" in names["env"]["detail"]  # the compose file's database, created by the probe
        machine = "x86_64" if arch == "amd64" else "aarch64"
        assert machine in names["read"]["detail"]


def test_every_cell_gets_its_verdict(stack: dict[str, Any]) -> None:
    expected = {
        "db": ("ready", "ready"),
        "proxy": ("ready", "ready"),
        "app": ("ready", "ready"),
        "legacy": ("ready", "missing"),
        "reports": ("ready", "missing"),
        "vendor": ("ready", "ready"),
        "armonly": ("missing", "ready"),
    }
    components = {cid.split("/")[0] for cid in cells(stack)}
    got = {c: (cells(stack)[f"{c}/amd64"]["status"], cells(stack)[f"{c}/arm64"]["status"]) for c in components}
    details = {cid: (c["status"], c["detail"]) for cid, c in cells(stack).items()}
    assert got == expected, details
    assert stack["run"].returncode == 1, stack["run"].stderr[-2000:]
    checks = {k["name"] for s in cells(stack)["legacy/amd64"]["stages"] for k in s["checks"]}
    assert checks == {"healthy", "stays-up"}
    healthy = [k for s in cells(stack)["legacy/amd64"]["stages"] for k in s["checks"] if k["name"] == "healthy"]
    assert healthy[0]["detail"] == "its Docker healthcheck says healthy"
    ports = [k for s in cells(stack)["reports/amd64"]["stages"] for k in s["checks"] if k["name"] == "healthy"]
    assert ports[0]["detail"] == "port 3306 listens"


def test_the_migration_plan(stack: dict[str, Any]) -> None:
    migration = stack["report"]["migration"]
    plan = {(p["component"], p["arch"]): p for p in migration["plan"]}
    assert {k: p["text"] for k, p in plan.items() if k[1] == "arm64"} == {
        ("db", "arm64"): "ready",
        ("proxy", "arm64"): "ready",
        ("app", "arm64"): "ready",
        ("legacy", "arm64"): "blocked",
        ("reports", "arm64"): "upgrade to >= 2",
        ("vendor", "arm64"): "use 1-aarch64",
        ("armonly", "arm64"): "ready",
    }
    assert plan[("armonly", "amd64")]["text"] == "emulate the arm64 image"
    assert "ready under emulation in" in plan[("armonly", "amd64")]["why"]
    assert "looked at 1 of 2 tags" in plan[("reports", "arm64")]["why"]
    searches = {(s["component"], s["arch"]): s for s in migration["searches"]}
    assert set(searches) == {("legacy", "arm64"), ("reports", "arm64"), ("armonly", "amd64")}
    assert searches[("reports", "arm64")]["upgrade_to"] == "2" and searches[("legacy", "arm64")]["tags_listed"] == 1
    pins = {p["service"]: (p["platform"], p["verdict"], p["why"]) for p in migration["pins"]}
    assert pins == {
        "db": ("linux/amd64", "drop", "ready on arm64"),
        "legacy": ("linux/amd64", "keep", "arm64: blocked"),
        "reports": ("linux/amd64", "drop after", "arm64: upgrade to >= 2"),
        "vendor": ("linux/amd64", "drop after", "arm64: use 1-aarch64"),
    }


def test_the_reports_and_the_plan_verb_show_the_tables(stack: dict[str, Any]) -> None:
    md = stack["markdown"]
    assert "## Migration plan" in md and "### Arch pins (compose `platform:`, Kubernetes node selectors)" in md
    assert "| db | db | linux/amd64 | drop | ready on arm64 |" in md
    plan = stack["plan"]
    assert plan.returncode == 0, plan.stderr
    assert "| reports | 127.0.0.1:5000/lab/gap-upgrade:1 | arm64 | upgrade to &gt;= 2 |" in plan.stdout
    assert "| legacy | legacy | linux/amd64 | keep | arm64: blocked |" in plan.stdout


# -- --from-host ---------------------------------------------------------------------------------
@pytest.fixture
def running_stack() -> Iterator[str]:
    """Two containers as compose would have started them (its labels), carrying this test
    session's label so the leak check sees them."""
    project = f"hoststack{uuid.uuid4().hex[:6]}"
    labels = ["--label", f"{TEST_LABEL_KEY}={TEST_SESSION}", "--label", f"com.docker.compose.project={project}"]
    started: list[str] = []
    try:
        for service, image, extra in (
            ("db", f"{LAB}/mariadb:10.11", ["-e", "MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1"]),
            ("app", f"{LAB}/app-client:1", ["-e", "DB_HOST=db", "-e", "DB_PASSWORD=host-secret-value"]),
        ):
            depends = ["--label", "com.docker.compose.depends_on=db:service_started:false"] if service == "app" else []
            name = f"{project}-{service}-1"
            command = ["sleep", "600"] if service == "app" else []
            compose_service = ["--label", f"com.docker.compose.service={service}"]
            subprocess.run(
                ["docker", "run", "-d", "--name", name, *labels, *compose_service, *depends, *extra, image, *command],
                check=True,
                capture_output=True,
                timeout=120,
            )
            started.append(name)
        yield project
    finally:
        if started:
            subprocess.run(["docker", "rm", "-fv", *started], capture_output=True, timeout=120)


def test_init_from_the_host_maps_the_running_containers(
    no_leaks: None, running_stack: str, tmp_path: Path, lab: Path
) -> None:  # no_leaks first: it looks after running_stack removed its containers
    out = tmp_path / "host.toml"
    result = ecoready("init", "--from-host", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert ecoready("validate", str(out)).returncode == 0  # whatever else runs on the engine
    rows = {c.service: c for c in load(out).components if c.image.startswith(f"{LAB}/")}
    assert (rows["db"].probe, rows["app"].probe, rows["app"].backend) == ("server", "command", rows["db"].id)
    assert rows["app"].options["command"] == ["sleep", "600"]
    assert rows["app"].options["env"] == {"DB_HOST": "{host}"}
    assert "host-secret-value" not in out.read_text() and "host-secret-value" not in result.stderr
