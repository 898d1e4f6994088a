#!/bin/bash
# Health tests of the lab MariaDB image, named like the official image's healthcheck.sh:
#   --connect             the real server answers over TCP (the init server has no network)
#   --innodb_initialized  InnoDB is up
#   --galera_online       wsrep_local_state = 4 (Synced)
#   --galera_ready        wsrep_ready = ON
# Uses the healthcheck user the entrypoint created. Exit 0 when every test passes.
set -eo pipefail
DATADIR=${DATADIR:-/var/lib/mysql}
CNF="$DATADIR/.my-healthcheck.cnf"
[ -r "$CNF" ] || { echo "healthcheck: $CNF missing (server not initialised yet)" >&2; exit 1; }

q() { mariadb --defaults-extra-file="$CNF" --protocol=tcp -h127.0.0.1 --batch --skip-column-names -e "$1"; }
status() { q "SHOW GLOBAL STATUS LIKE '$1'" | cut -f2; }

[ $# -gt 0 ] || set -- --connect
for test in "$@"; do
	case "$test" in
		--connect) q 'SELECT 1' >/dev/null ;;
		--innodb_initialized)
			[ "$(q "SELECT COUNT(*) FROM information_schema.ENGINES WHERE ENGINE='InnoDB' AND SUPPORT IN ('YES','DEFAULT','ENABLED')")" = 1 ] ;;
		--galera_online) [ "$(status wsrep_local_state)" = 4 ] ;;
		--galera_ready) [ "$(status wsrep_ready)" = ON ] ;;
		*) echo "healthcheck: unknown test $test" >&2; exit 2 ;;
	esac
done
