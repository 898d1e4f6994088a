"""The code paths of the upstream probes that the lab can run, on the lab's MariaDB:

- the server probe's MySQL and Percona flavours (MYSQL_* env and *_FILE, `mysqld` as the
  command, readiness by TCP round trip, the auth check): the lab image honours the MariaDB
  image's contract, which accepts the MYSQL_* names as aliases;
- the backend accounts the proxies and PMM create (probes/accounts.py: a script file run with
  `source`, MaxScale's grants), then a real login over TCP as each account.
ProxySQL, MaxScale, Router, PMM and mysqlsh themselves are not in Debian: their own parts
run in unit tests against a fake engine only (docs/components.md says so)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ecoready

pytestmark = pytest.mark.docker

LAB_IMAGE = "127.0.0.1:5000/lab/mariadb:10.11"


@pytest.mark.parametrize("flavor", ["mysql", "percona"])
def test_mysql_and_percona_flavours_of_the_server_contract(
    lab: Path, tmp_path: Path, flavor: str, no_leaks: None
) -> None:
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        f'[[components]]\nid = "srv"\ncategory = "server"\nprobe = "server"\nimage = "{LAB_IMAGE}"\n'
        f'[components.options]\nflavor = "{flavor}"\nargs = ["--innodb-buffer-pool-size=64M"]\n'
    )
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--arch", "amd64", "--json", "-")
    assert result.returncode == 0, result.stderr
    (cell,) = json.loads(result.stdout)["cells"]
    assert cell["status"] == "ready", cell
    checks = {c["name"]: c for c in cell["stages"][2]["checks"]}
    assert set(checks) == {"crud", "version", "arch", "auth"}
    assert checks["auth"]["detail"].startswith("root@%: mysql_native_password")


async def test_backend_accounts_the_upstream_probes_create_can_log_in(
    lab: Path, tmp_path: Path, no_leaks: None
) -> None:
    from app.config import load
    from app.context import ProbeContext
    from app.session import RunOptions, Session
    from app.sql import SqlTarget
    from probes import maxscale, pmm, proxysql
    from probes.accounts import Account, create_accounts

    matrix_file = tmp_path / "m.toml"
    matrix_file.write_text(
        f'[[components]]\nid = "db"\ncategory = "server"\nprobe = "server"\nimage = "{LAB_IMAGE}"\n'
        f'[[components]]\nid = "proxy"\ncategory = "load-balancer"\nprobe = "proxysql"\nimage = "{LAB_IMAGE}"\n'
        'backend = "db"\n'
    )
    session = Session(load(matrix_file), RunOptions(only=["proxy"], arches=["amd64"]), lambda event: None)
    await session.open()
    assert session.runner is not None and session.plan is not None
    ctx = ProbeContext(session.plan.cells[0], session.runner.run)
    try:
        backend = await ctx.backend()
        assert backend.flavor == "mariadb"
        secret = ctx.secret
        accounts = [
            Account(proxysql.MONITOR_USER, secret("mon"), ("USAGE ON *.*",)),
            Account(proxysql.APP_USER, secret("app"), (f"ALL ON {proxysql.SMOKE_DB}.*",)),
            Account(maxscale.SERVICE_USER, secret("mxs"), maxscale.service_grants("mariadb")),
            Account(pmm.PMM_USER, secret("pmm"), pmm.PMM_GRANTS["mariadb"]),
        ]
        await create_accounts(ctx, backend, accounts, "accounts")
        for account in accounts:
            rows = await ctx.sql(
                backend.container,
                SqlTarget(backend.host, backend.port, account.user),
                account.password,
                "SELECT CURRENT_USER() AS me",
            )
            assert rows == [{"me": f"{account.user}@%"}]
        # the passwords never reached an argv: the script file held them
        grants = await ctx.sql(
            backend.container,
            SqlTarget("127.0.0.1", 3306, backend.user),
            backend.password,
            f"SHOW GRANTS FOR '{maxscale.SERVICE_USER}'@'%'",
        )
        text = " ".join(v or "" for row in grants for v in row.values())
        assert "REPLICA MONITOR" in text or "SLAVE MONITOR" in text
        assert "SELECT ON `mysql`.*" in text
    finally:
        await ctx.close()
        await session.close()
