"""Percona XtraDB Cluster: three nodes of `percona/percona-xtradb-cluster`, the Galera
start, waits and checks of probes/galera.py with the image's own contract.

The image's entrypoint (docs/image-contracts.md "Percona XtraDB Cluster"; percona-docker
`percona-xtradb-cluster-8.4/dockerdir/entrypoint.sh`) bootstraps a new cluster when
`CLUSTER_JOIN` is empty and joins the listed nodes otherwise (then it skips initialising
the datadir: the data, users included, arrives by SST); `CLUSTER_NAME` names the cluster.
Extra config is read from `/etc/percona-xtradb-cluster.conf.d/`.

PXC 8.x encrypts cluster traffic by default (`pxc_encrypt_cluster_traffic=ON`): every node
must use the same CA, certificate and key, or the Galera handshake fails. The probe
generates them once, with the image's own openssl, into a volume every node mounts at
/cert, and points `[mysqld]` and `[sst]` (encrypt=4) at them as pxc-docs `docker.md` does.
Root's password and the image's service passwords (`XTRABACKUP_PASSWORD`,
`CLUSTERCHECK_PASSWORD`, `MONITOR_PASSWORD`) are files (`*_FILE`).
"""

from __future__ import annotations

from ecoready.probe_api import CheckFailed, Secret, StageFailed
from ecoready.probes.shared.sql_server import Server, start_server
from ecoready.probes.shared.wsrep import WsrepCluster

CERT_DIR = "/cert"
CONFIG_PATH = "/etc/percona-xtradb-cluster.conf.d/ecoready.cnf"
CLUSTER_NAME = "ecoready"
SERVICE_SECRETS = ("XTRABACKUP_PASSWORD", "CLUSTERCHECK_PASSWORD", "MONITOR_PASSWORD")
ENCRYPTION_QUERY = (
    "SELECT @@pxc_encrypt_cluster_traffic AS encrypt, @@ssl_ca AS ca, @@ssl_cert AS cert, "
    "@@wsrep_provider_options AS provider"
)


def cert_script(cert_dir: str = CERT_DIR, owner: str = "mysql:mysql") -> str:
    """One CA and one server certificate for every node (the CNs must differ from the
    CA's, pxc-docs encrypt-traffic.md); the files end up owned by the image's mysql user,
    the CA's key is not kept."""
    return f"""set -e
cd {cert_dir}
openssl genrsa -out ca-key.pem 2048
openssl req -new -x509 -nodes -days 3650 -key ca-key.pem -out ca.pem -subj /CN=ecoready-pxc-ca
openssl req -newkey rsa:2048 -nodes -keyout server-key.pem -out server-req.pem -subj /CN=ecoready-pxc-node
openssl x509 -req -in server-req.pem -days 3650 -CA ca.pem -CAkey ca-key.pem -set_serial 01 -out server-cert.pem
openssl verify -CAfile ca.pem server-cert.pem
rm -f ca-key.pem server-req.pem
chown -R {owner} {cert_dir}
chmod 0600 server-key.pem
"""


def ssl_paths(cert_dir: str = CERT_DIR) -> str:
    return f"ssl-ca={cert_dir}/ca.pem\nssl-cert={cert_dir}/server-cert.pem\nssl-key={cert_dir}/server-key.pem\n"


def node_config() -> bytes:
    """The certificates for client connections, Galera replication and SST (pxc-docs docker.md)."""
    paths = ssl_paths()
    return f"[mysqld]\npxc_encrypt_cluster_traffic=ON\n{paths}\n[sst]\nencrypt=4\n{paths}".encode()


def node_env(node: str, index: int) -> dict[str, str]:
    """node1 bootstraps (no CLUSTER_JOIN); the others join it."""
    env = {"CLUSTER_NAME": CLUSTER_NAME}
    env.update({f"{name}_FILE": secret_path(name) for name in SERVICE_SECRETS})
    if index > 0:
        env["CLUSTER_JOIN"] = "node1"
    return env


def secret_path(name: str) -> str:
    return f"/run/ecoready/{name.lower().replace('_', '-')}"


def provider_options(text: str) -> dict[str, str]:
    """`wsrep_provider_options` (`key = value; key = value; ...`) as a dict."""
    options = {}
    for part in text.split(";"):
        key, sep, value = part.partition("=")
        if sep:
            options[key.strip()] = value.strip()
    return options


def describe_encryption(row: dict[str, str | None]) -> str:
    """Pass detail when cluster traffic is encrypted with the shared certificates."""
    encrypt = (row.get("encrypt") or "").upper()
    if encrypt not in ("1", "ON"):
        raise CheckFailed(f"pxc_encrypt_cluster_traffic is {row.get('encrypt')!r}, expected ON")
    if row.get("cert") != f"{CERT_DIR}/server-cert.pem" or row.get("ca") != f"{CERT_DIR}/ca.pem":
        raise CheckFailed(f"the node does not use the shared certificates (ssl_cert {row.get('cert')!r})")
    socket_ssl = provider_options(row.get("provider") or "").get("socket.ssl", "?")
    return f"pxc_encrypt_cluster_traffic=ON, shared CA {CERT_DIR}/ca.pem, Galera socket.ssl={socket_ssl}"


class PxcProbe(WsrepCluster):
    kind = "pxc"

    async def prepare(self, root: Secret) -> None:
        ctx = self.ctx
        self.certs = await ctx.volume("certs")
        self.service_secrets = {name: ctx.secret(name.lower()) for name in SERVICE_SECRETS}
        # A throw-away container of the same image: its openssl writes the certificates once.
        maker = await ctx.start_container("certs", entrypoint=["sleep", "infinity"], volumes={self.certs: CERT_DIR})
        result = await ctx.exec(maker, ["bash", "-c", cert_script()], user="root", timeout=ctx.scaled(120))
        if not result.ok or "server-cert.pem: OK" not in result.stdout:
            raise StageFailed(f"could not make the cluster certificates with the image's openssl: {result.last_line()}")
        await ctx.remove(maker)  # node1 becomes the container whose log the report shows

    async def start_node(self, node: str, index: int, root: Secret) -> Server:
        files: dict[str, bytes | Secret] = {CONFIG_PATH: node_config()}
        files.update({secret_path(name): secret for name, secret in self.service_secrets.items()})
        return await start_server(
            self.ctx, node, root=root, env=node_env(node, index), files=files, volumes={self.certs: CERT_DIR}
        )

    async def smoke(self) -> None:
        await self.ctx.check("cluster-traffic-encrypted", self._encrypted)
        await super().smoke()

    async def _encrypted(self) -> str:
        details = []
        for server in self.nodes.values():
            rows = await server.query(ENCRYPTION_QUERY)
            details.append(describe_encryption(rows[0] if rows else {}))
        return f"all {len(details)} nodes: {details[0]}"


PROBE = PxcProbe
