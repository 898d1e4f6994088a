"""MariaDB Galera: three nodes on the cell's private network, on the cluster flow all
Galera kinds share (probes/shared/wsrep.py); this module says how one MariaDB node starts.

MariaDB: state transfer with mariadb-backup, the method the official `mariadb` image ships
the tools for (it installs `mariadb-backup` and `socat` next to the server and nothing for
rsync; the lab image has the same). Its credentials (`wsrep_sst_auth`) reach each node in a
config file, never on a command line or in the environment. All nodes share one root
password, because a joiner's data (users included) arrives from the donor.
"""

from __future__ import annotations

from ecoready.probe_api import Secret
from ecoready.probes.shared.sql_server import Server, start_server
from ecoready.probes.shared.wsrep import NODES, WsrepCluster

CLUSTER = "ecoready"
PROVIDER = "/usr/lib/libgalera_smm.so"  # the official image's path (the lab image links it there)
SST_METHOD = "mariabackup"
# Read by the server from /etc/mysql/conf.d (the official image's config directory; the
# lab's Debian config includes it too).
SST_CONFIG = "/etc/mysql/conf.d/ecoready-sst.cnf"


def node_args(node: str, index: int, provider: str = PROVIDER) -> list[str]:
    """MariaDB server arguments of the index-th node; node1 bootstraps, the others join the
    nodes started so far. Not all three: Galera resolves every name of the address at start,
    and the name of a node not started yet costs a DNS timeout (10 s on a cell network)."""
    bootstrap = index == 0
    address = "gcomm://" if bootstrap else "gcomm://" + ",".join(NODES[: index + 1])
    args = [
        "--wsrep-on=ON",
        f"--wsrep-provider={provider}",
        f"--wsrep-cluster-name={CLUSTER}",
        f"--wsrep-cluster-address={address}",
        f"--wsrep-node-name={node}",
        f"--wsrep-sst-method={SST_METHOD}",
        "--binlog-format=ROW",
        "--innodb-autoinc-lock-mode=2",
        "--default-storage-engine=InnoDB",
    ]
    if bootstrap:
        args.append("--wsrep-new-cluster")
    return args


def sst_config(root_password: str) -> bytes:
    """The SST credentials as a server option (the donor's mariadb-backup logs in with them)."""
    escaped = root_password.replace("\\", "\\\\").replace('"', '\\"')
    return f'[mariadb]\nwsrep_sst_auth="root:{escaped}"\n'.encode()


class GaleraProbe(WsrepCluster):
    kind = "galera"

    async def start_node(self, node: str, index: int, root: Secret) -> Server:
        return await start_server(
            self.ctx,
            node,
            root=root,
            args=node_args(node, index),
            files={SST_CONFIG: sst_config(root.reveal())},
        )


PROBE = GaleraProbe
