# -- the mariadb check set ---------------------------------------------------------------
# Output formats as printed by Debian's mariadb-client 10.11 and 11.8 (`mariadb --version`)
# and by `--batch --skip-column-names` (tab-separated, NULL spelled out).


def test_mariadb_version_lines_of_both_client_generations() -> None:
    from ecoready.probes.shell import parse_mariadb_version

    old = "mariadb  Ver 15.1 Distrib 10.11.18-MariaDB, for debian-linux-gnu (aarch64) using  EditLine wrapper"
    new = "mariadb from 11.8.6-MariaDB, client 15.2 for debian-linux-gnu (x86_64) using  EditLine wrapper"
    assert parse_mariadb_version(old) == ("10.11.18-MariaDB", "aarch64")
    assert parse_mariadb_version(new) == ("11.8.6-MariaDB", "x86_64")


def test_mariadb_batch_output_is_split_on_tabs() -> None:
    from ecoready.probes.shell import parse_batch

    assert parse_batch("2\tünïcødé ✓\tNULL\n10.11.18-MariaDB-0+deb12u1\n") == [
        ["2", "ünïcødé ✓", "NULL"],
        ["10.11.18-MariaDB-0+deb12u1"],
    ]
