"""The code paths of the upstream probes that the lab can run, on the lab's MariaDB:

- the server probe's MySQL and Percona flavours (MYSQL_* env and *_FILE, `mysqld` as the
  command, readiness by TCP round trip, the auth check): the lab image honours the MariaDB
  image's contract, which accepts the MYSQL_* names as aliases;
- the backend accounts the proxies and PMM create (probes/shared/accounts.py: a script file run with
  `source`, MaxScale's grants), then a real login over TCP as each account.
- the certificates Percona XtraDB Cluster nodes share (probes/pxc.py's script, run with a
  real OpenSSL 3) serving TLS from a real server configured with the same ssl-* lines.
ProxySQL, MaxScale, Router, PMM, mysqlsh, PXC, XtraBackup and group replication themselves
are not in Debian: their own parts run in unit tests against a fake engine only
(docs/components.md says so). The physical-backup flow XtraBackup shares, the Galera code
PXC shares and the replication code group replication shares run in the lab matrix rows
(tests/integration/test_lab_matrix.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import ecoready

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
    # the start and smoke contract is under test here: no bench stage
    result = ecoready(
        "run", "--headless", "--matrix", str(matrix), "--arch", "amd64", "--profile", "smoke", "--json", "-"
    )
    assert result.returncode == 0, result.stderr
    (cell,) = json.loads(result.stdout)["cells"]
    assert cell["status"] == "ready", cell
    checks = {c["name"]: c for c in next(s for s in cell["stages"] if s["stage"] == "smoke")["checks"]}
    assert set(checks) == {"crud", "version", "arch", "auth"}
    assert checks["auth"]["detail"].startswith("root@%: mysql_native_password")


async def test_backend_accounts_the_upstream_probes_create_can_log_in(
    lab: Path, tmp_path: Path, no_leaks: None
) -> None:
    from ecoready.matrix.load import load
    from ecoready.probe_api.context import ProbeContext
    from ecoready.probe_api.sql import SqlTarget
    from ecoready.probes import maxscale, pmm, proxysql
    from ecoready.probes.shared import proxy_checks
    from ecoready.probes.shared.accounts import Account, create_accounts
    from ecoready.run.session import RunOptions, Session

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
            Account(proxy_checks.APP_USER, secret("app"), (f"ALL ON {proxy_checks.SMOKE_DB}.*",)),
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


async def test_pxc_certificates_serve_tls_from_a_lab_server(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    """PXC's certificate script with a real OpenSSL 3 (the host's: the lab images have no
    openssl binary; UBI 9's, in the PXC image, is OpenSSL 3.0 too), then a real server that
    loads the CA, certificate and key from the ssl-* lines the PXC nodes get and serves TLS."""
    import os
    import subprocess

    from ecoready.matrix.load import load
    from ecoready.probe_api.context import ProbeContext
    from ecoready.probe_api.sql import option_file
    from ecoready.probes.pxc import cert_script, ssl_paths
    from ecoready.probes.shared.sql_server import start_server
    from ecoready.run.session import RunOptions, Session

    made = subprocess.run(
        ["bash", "-c", cert_script(str(tmp_path), owner=f"{os.getuid()}:{os.getgid()}")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    assert "server-cert.pem: OK" in made.stdout
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["ca.pem", "server-cert.pem", "server-key.pem"]  # the CA's key is gone
    assert (tmp_path / "server-key.pem").stat().st_mode & 0o777 == 0o600

    matrix_file = tmp_path / "m.toml"
    matrix_file.write_text(f'[[components]]\nid = "db"\ncategory = "server"\nprobe = "server"\nimage = "{LAB_IMAGE}"\n')
    session = Session(load(matrix_file), RunOptions(only=["db"], arches=["amd64"]), lambda event: None)
    await session.open()
    assert session.runner is not None and session.plan is not None
    ctx = ProbeContext(session.plan.cells[0], session.runner.run)
    try:
        files: dict[str, bytes] = {f"/cert/{name}": (tmp_path / name).read_bytes() for name in names}
        files["/etc/mysql/conf.d/ecoready-ssl.cnf"] = f"[mysqld]\n{ssl_paths()}".encode()
        server = await start_server(ctx, "server", files=dict(files))
        rows = await server.query("SELECT @@have_ssl AS have, @@ssl_cert AS cert")
        assert rows == [{"have": "YES", "cert": "/cert/server-cert.pem"}]
        await ctx.put_files(server.container, {"/run/ecoready/tls.cnf": option_file("root", server.root.reveal())})
        argv = ["mariadb", "--defaults-extra-file=/run/ecoready/tls.cnf", "--ssl", "--ssl-ca=/cert/ca.pem"]
        argv += ["--protocol=TCP", "-h", "127.0.0.1", "-N", "-e", "SHOW SESSION STATUS LIKE 'Ssl_cipher'"]
        tls = await ctx.exec(server.container, argv)
        assert tls.ok, tls.stderr
        name, cipher = tls.stdout.strip().split("\t")
        assert name == "Ssl_cipher" and cipher  # the session is encrypted with the shared identity
    finally:
        await ctx.close()
        await session.close()
