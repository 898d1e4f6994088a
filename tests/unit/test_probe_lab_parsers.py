"""Pure parts of the lab probes: command lines, option files, output parsing. The output
samples are what the tools printed in the lab (Debian 12 packages) and what their docs
describe; the probes themselves run end to end in tests/integration/test_lab_matrix.py."""

from __future__ import annotations

from ecoready.probes.galera import node_args, sst_config
from ecoready.probes.haproxy import haproxy_config, server_states, sha2_login_packet
from ecoready.probes.mariabackup import TOOL
from ecoready.probes.mydumper import dump_command, load_command, tool_option_file
from ecoready.probes.replication import DIALECTS, replica_state
from ecoready.probes.shared.physical_backup import (
    CHOWN_RESTORED,
    completed_ok,
    copy_back_args,
    option_file,
    tool_command,
)
from ecoready.probes.shared.sql_server import numbers
from ecoready.probes.shared.wsrep import synced
from ecoready.probes.toolkit import checksum_command, digest_classes, parse_checksum


def test_galera_bootstrap_and_joiners() -> None:
    first, second, third = (node_args(node, i) for i, node in enumerate(("node1", "node2", "node3")))
    assert "--wsrep-new-cluster" in first and "--wsrep-cluster-address=gcomm://" in first
    # a joiner names only the nodes started before it and itself (no DNS wait for the others)
    assert "--wsrep-new-cluster" not in second and "--wsrep-cluster-address=gcomm://node1,node2" in second
    assert "--wsrep-new-cluster" not in third and "--wsrep-cluster-address=gcomm://node1,node2,node3" in third
    assert not any("sst-auth" in a for a in first + second + third)  # no credentials on a command line
    assert "--wsrep-sst-method=mariabackup" in first  # the official image ships no rsync
    assert sst_config('p"w').decode() == '[mariadb]\nwsrep_sst_auth="root:p\\"w"\n'
    ok = {"wsrep_local_state_comment": "Synced", "wsrep_cluster_size": "3", "wsrep_ready": "ON"}
    assert synced(ok, 3) is None
    assert synced({**ok, "wsrep_local_state_comment": "Joining: receiving State Transfer"}, 3) == (
        "state Joining: receiving State Transfer"
    )
    assert synced(ok, 2) == "cluster size 3 (want 2)"


def test_replication_statement_and_thread_states() -> None:
    mariadb = DIALECTS["mariadb"]
    sql = mariadb.change_source("primary", "repl", "pa'ss")
    assert "MASTER_USE_GTID=slave_pos" in sql and "MASTER_PASSWORD='pa\\'ss'" in sql
    assert replica_state({"Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes"}, mariadb) is None
    assert replica_state(
        {"Slave_IO_Running": "Connecting", "Slave_SQL_Running": "Yes", "Last_IO_Error": "error connecting to master"},
        mariadb,
    ) == ("IO thread Connecting, SQL thread Yes: error connecting to master")


def test_backup_option_file_and_restore_commands() -> None:
    cnf = option_file(TOOL, "source", 'a"b').decode()
    assert cnf.startswith("[mariadb-backup]\n") and 'password="a\\"b"' in cnf and "host=source\n" in cnf
    argv = tool_command(TOOL, *copy_back_args())
    assert argv[:2] == ["mariadb-backup", "--defaults-extra-file=/run/ecoready/backup.cnf"]  # must come first
    assert "--copy-back" in argv and "--datadir=/restore" in argv
    assert CHOWN_RESTORED == ["chown", "-R", "--reference=/var/lib/mysql", "/restore"]
    assert completed_ok("[00] 2026-11-21 23:20:01 completed OK!\n") and not completed_ok("error")


def test_mydumper_uses_option_files_not_argv_passwords() -> None:
    cnf = tool_option_file("backend-server", "s3cret").decode()
    assert cnf.count("password=") == 3 and "[mydumper]" in cnf and "[myloader]" in cnf
    for argv in (dump_command("/c.cnf", "h"), load_command("/c.cnf", "h")):
        assert "--defaults-file=/c.cnf" in argv and "s3cret" not in " ".join(argv)
    assert "-o" in load_command("/c.cnf", "h")  # --overwrite-tables in myloader 0.10


def test_pt_table_checksum_report_rows() -> None:
    # pt-table-checksum 3.2.1 as printed in the lab (columns: TS ERRORS DIFFS ROWS DIFF_ROWS
    # CHUNKS SKIPPED TIME TABLE); older versions print no DIFF_ROWS column.
    out = (
        "Checking if all tables can be checksummed ...\nStarting checksum ...\n"
        "            TS ERRORS  DIFFS     ROWS  DIFF_ROWS  CHUNKS SKIPPED    TIME TABLE\n"
        "11-21T23:07:05      0      0        2          0       1       0   0.003 t1.t\n"
    )
    (row,) = parse_checksum(out)
    assert row == {
        "ts": "11-21T23:07:05",
        "errors": "0",
        "diffs": "0",
        "rows": "2",
        "chunks": "1",
        "skipped": "0",
        "table": "t1.t",
    }
    old = "04-25T10:00:00      0      0        2       1       0   0.010 test.t\n"
    assert parse_checksum(old)[0]["chunks"] == "1"
    assert "--recursion-method=none" in checksum_command("backend-server")


def test_pt_query_digest_profile_classes() -> None:
    # pt-query-digest 3.2.1's profile as printed in the lab (no MISC line when all classes fit)
    out = (
        "# Profile\n# Rank Query ID                           Response time Calls R/Call V/M  \n"
        "# ==== ================================== ============= ===== ====== =====\n"
        "#    1 0x1FE1379FE2A31B8D16219655761820A2 0.0001 60.0%     5 0.0000  0.00 SELECT ecoready_toolkit.t\n"
        "#    2 0x8B1A9953C4611296A827ABF8C47804D7 0.0000 40.0%     1 0.0000  0.00 SELECT ecoready_toolkit.t\n"
        "\n# Query 1: 0 QPS, 0x concurrency, ID 0x1FE1379FE2A31B8D16219655761820A2 at byte 1234\n"
    )
    assert digest_classes(out) == 2
    assert digest_classes("# Profile\n# Rank Query ID\n# MISC 0xMISC 0.0 0.0% 1 0.0 0.0 <1 ITEMS>\n") == 0


def test_haproxy_config_and_server_state_table() -> None:
    cfg = haproxy_config("backend-server")
    assert "option mysql-check user haproxy_check post-41" in cfg and "server db1 backend-server:3306 check" in cfg
    assert "tcp-check" not in cfg
    # `show servers state` of HAProxy 2.6.12 as printed in the lab (format version 1)
    out = (
        "1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight "
        "srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state "
        "srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port "
        "srv_check_addr srv_agent_addr srv_agent_port\n"
        "3 mysql_servers 1 db1 172.21.0.2 2 0 1 1 3 15 3 4 6 0 0 0 backend-server 3306 - 0 0 - - 0\n"
    )
    assert server_states(out) == {"db1": "2"}


def test_numbers_table_is_portable_sql() -> None:
    sql = numbers(2000)
    assert "seq_" not in sql and "RECURSIVE" not in sql and sql.endswith("AS numbers") and "<= 2000" in sql


def test_haproxy_checks_mysql_with_a_plugin_aware_login() -> None:
    """MySQL 8.4 and 9.x: HAProxy's mysql-check login (no CLIENT_PLUGIN_AUTH) is refused with
    1251 by a caching_sha2_password account, so the check is a tcp-check sequence whose
    login names the plugin, with an empty auth response."""
    packet = sha2_login_packet("haproxy_check")
    length, sequence, payload = int.from_bytes(packet[:3], "little"), packet[3], packet[4:]
    assert length == len(payload) and sequence == 1
    flags = int.from_bytes(payload[:4], "little")
    assert flags & 0x80000 and flags & 0x8000 and flags & 0x200  # plugin auth, secure connection, 4.1
    rest = payload[32:]  # after flags, max packet, charset and 23 filler bytes
    assert payload[9:32] == bytes(23)
    user, rest = rest.split(b"\x00", 1)
    assert user == b"haproxy_check" and rest == b"\x00caching_sha2_password\x00"
    for flavor in ("mysql", "percona"):
        cfg = haproxy_config("backend-server", flavor=flavor)
        assert "mysql-check" not in cfg and "option tcp-check" in cfg
        assert f"tcp-check send-binary {packet.hex().upper()}" in cfg
        assert "tcp-check expect rbinary ^[0-9A-F]{6}0200" in cfg and "send-binary 0100000001" in cfg
