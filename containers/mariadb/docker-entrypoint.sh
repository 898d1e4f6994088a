#!/bin/bash
# Entry point of ecoready's lab MariaDB image, written for the lab from the documented
# contract of the official `mariadb` image so the probes drive both the same way:
#   MARIADB_ROOT_PASSWORD | _ALLOW_EMPTY_ROOT_PASSWORD | _RANDOM_ROOT_PASSWORD (one needed),
#   MARIADB_ROOT_HOST, MARIADB_DATABASE, MARIADB_USER + MARIADB_PASSWORD,
#   MYSQL_* aliases, *_FILE variants, /docker-entrypoint-initdb.d/*.{sh,sql,sql.gz,sql.xz,sql.zst}.
# Initialisation: a copy of the data directory the image initialised (/usr/share/mariadb-template;
# mariadb-install-db when mariadbd's arguments change what initialising makes), then the
# set-up (root's password and hosts, the healthcheck user, the database, the user). With
# init scripts or a Galera node's arguments, as the official image does it: a temporary
# server with --skip-networking (and wsrep off) runs the set-up and the scripts, and only
# then the real server starts. Without them the real server runs the set-up from its
# --init-file (a pipe: the password never lands in a file) before it answers any client,
# so a container starts one server instead of two; what a client sees is the same.
# Readiness: `healthcheck.sh --connect` only passes against the real server.
set -eo pipefail
shopt -s nullglob

# note, fail, the quoting, template_fits, one_start, stop_temp_server, run_init_scripts,
# write_init_cnf, exec_server: shared with the other server image (containers/shared/)
. /usr/local/lib/entrypoint-lib.sh

# env_or_file VAR ALIAS: VAR from VAR, VAR_FILE, ALIAS or ALIAS_FILE (never two of them).
env_or_file() {
	local var=$1 alias=$2 value="" found=""
	for name in "$var" "$alias"; do
		local file_name="${name}_FILE"
		if [ -n "${!name:-}" ] && [ -n "${!file_name:-}" ]; then
			fail "both $name and $file_name are set (they are exclusive)"
		fi
		if [ -z "$found" ] && [ -n "${!name:-}" ]; then value=${!name}; found=$name; fi
		if [ -z "$found" ] && [ -n "${!file_name:-}" ]; then
			[ -r "${!file_name}" ] || fail "$file_name points to ${!file_name}, which cannot be read"
			value=$(<"${!file_name}"); found=$file_name
		fi
	done
	unset "${var}_FILE" "${alias}_FILE" "$alias"
	export "$var=$value"
}

setup_env() {
	env_or_file MARIADB_ROOT_PASSWORD MYSQL_ROOT_PASSWORD
	env_or_file MARIADB_ALLOW_EMPTY_ROOT_PASSWORD MYSQL_ALLOW_EMPTY_PASSWORD
	env_or_file MARIADB_RANDOM_ROOT_PASSWORD MYSQL_RANDOM_ROOT_PASSWORD
	env_or_file MARIADB_ROOT_HOST MYSQL_ROOT_HOST
	env_or_file MARIADB_DATABASE MYSQL_DATABASE
	env_or_file MARIADB_USER MYSQL_USER
	env_or_file MARIADB_PASSWORD MYSQL_PASSWORD
	: "${MARIADB_ROOT_HOST:=%}"
	DATADIR=/var/lib/mysql
	for arg in "$@"; do
		case "$arg" in --datadir=*) DATADIR=${arg#--datadir=} ;; esac
	done
	SOCKET=/run/mysqld/mysqld.sock
	INIT_CNF=/run/mysqld/.entrypoint-init.cnf
}

# Run SQL (stdin) against the temporary server as root, over its socket.
init_sql() { mariadb --defaults-extra-file="$INIT_CNF" --protocol=socket --socket="$SOCKET" "$@"; }

start_temp_server() {
	note "Starting temporary server"
	"$@" --skip-networking --wsrep_on=OFF --default-time-zone=SYSTEM --socket="$SOCKET" \
		--loose-innodb_buffer_pool_load_at_startup=0 &
	TEMP_PID=$!
	for _ in $(seq 1 300); do
		if mariadb --protocol=socket --socket="$SOCKET" -uroot --skip-password -e 'SELECT 1' >/dev/null 2>&1 \
			|| { [ -s "$INIT_CNF" ] && init_sql -e 'SELECT 1' >/dev/null 2>&1; }; then
			note "Temporary server started"
			return 0
		fi
		kill -0 "$TEMP_PID" 2>/dev/null || fail "the temporary server exited during initialisation"
		sleep 0.5
	done
	fail "the temporary server did not answer within 150 s"
}

# install_db DATADIR [mariadbd options]: the system tables, as the official image makes them.
install_db() {
	mariadb-install-db --datadir="$1" --rpm --auth-root-authentication-method=normal \
		--skip-test-db --skip-name-resolve --default-time-zone=SYSTEM --skip-log-bin \
		--expire-logs-days=0 "${@:2}" >/dev/null
}

TEMPLATE=/usr/share/mariadb-template  # made by install_db at build time (Dockerfile)
# Options that change what mariadb-install-db makes: with any of them, initialise for real.
INIT_OPTIONS='lower_case_table_names|innodb_page_size|innodb_data_file_path|innodb_data_home_dir|innodb_undo_directory|innodb_undo_tablespaces|innodb_log_group_home_dir|innodb_checksum_algorithm|aria_log_dir_path|character_set_server|collation_server|plugin_load|plugin_load_add|default_storage_engine|bootstrap'

# setup_sql HEALTHCHECK_PASSWORD: the set-up as SQL, one statement per line (as a server's
# --init-file reads it); not written to the binary log, so a replica starts with no
# transaction.
setup_sql() {
	local root_pw db
	root_pw=$(sql_string "$MARIADB_ROOT_PASSWORD")
	db=$(sql_name "$MARIADB_DATABASE")
	echo "SET @@SESSION.SQL_LOG_BIN=0;"
	echo "DELETE FROM mysql.global_priv WHERE user = '' OR (user = 'root' AND host NOT IN ('localhost'));"
	echo "ALTER USER 'root'@'localhost' IDENTIFIED BY $root_pw;"
	if [ "$MARIADB_ROOT_HOST" != localhost ]; then
		echo "CREATE USER 'root'@$(sql_string "$MARIADB_ROOT_HOST") IDENTIFIED BY $root_pw;"
		echo "GRANT ALL ON *.* TO 'root'@$(sql_string "$MARIADB_ROOT_HOST") WITH GRANT OPTION;"
	fi
	for h in localhost 127.0.0.1 ::1; do
		echo "CREATE USER 'healthcheck'@'$h' IDENTIFIED BY '$1';"
	done
	if [ -n "$MARIADB_DATABASE" ]; then
		echo "CREATE DATABASE IF NOT EXISTS $db;"
	fi
	if [ -n "$MARIADB_USER" ]; then
		echo "CREATE USER $(sql_string "$MARIADB_USER")@'%' IDENTIFIED BY $(sql_string "$MARIADB_PASSWORD");"
		if [ -n "$MARIADB_DATABASE" ]; then
			echo "GRANT ALL ON $db.* TO $(sql_string "$MARIADB_USER")@'%';"
		fi
	fi
	echo "FLUSH PRIVILEGES;"
}

initialize() {
	if [ -z "$MARIADB_ROOT_PASSWORD" ] && [ -z "$MARIADB_ALLOW_EMPTY_ROOT_PASSWORD" ] && [ -z "$MARIADB_RANDOM_ROOT_PASSWORD" ]; then
		fail "Database is uninitialized and password option is not specified: set one of MARIADB_ROOT_PASSWORD, MARIADB_ALLOW_EMPTY_ROOT_PASSWORD, MARIADB_RANDOM_ROOT_PASSWORD"
	fi
	if [ -n "$MARIADB_USER" ] && [ "$MARIADB_USER" = root ]; then
		fail "MARIADB_USER=root is not allowed: use MARIADB_ROOT_PASSWORD for root"
	fi
	if [ -n "$MARIADB_RANDOM_ROOT_PASSWORD" ]; then
		MARIADB_ROOT_PASSWORD=$(random_password)
		note "GENERATED ROOT PASSWORD: $MARIADB_ROOT_PASSWORD"
	fi
	if template_fits "$@"; then
		note "Copying the initialized database files of $TEMPLATE"
		cp -a "$TEMPLATE/." "$DATADIR/"
	else
		note "Initializing database files"
		install_db "$DATADIR" "${@:2}"
	fi
	note "Database files initialized"

	local health_pw
	health_pw=$(random_password)
	umask 077
	printf '[mariadb-client]\nport=3306\nsocket=%s\nuser=healthcheck\npassword=%s\n' "$SOCKET" "$health_pw" \
		>"$DATADIR/.my-healthcheck.cnf"
	umask 022
	if one_start "$@"; then
		SETUP_SQL=$(setup_sql "$health_pw")
		note "No init scripts: the server runs the set-up from its --init-file at its start"
		return 0
	fi
	start_temp_server "$@"
	setup_sql "$health_pw" | mariadb --protocol=socket --socket="$SOCKET" -uroot --skip-password
	write_init_cnf "$MARIADB_ROOT_PASSWORD"
	run_init_scripts "$MARIADB_DATABASE"
	stop_temp_server
	rm -f "$INIT_CNF"
	note "MariaDB init process done. Ready for start up."
}

if [ "$1" = install-db ]; then  # the image's build: the template data directory
	install_db "$2"
	exit 0
fi
if [ "${1:0:1}" = '-' ]; then
	set -- mariadbd "$@"
fi
case "$1" in
	mariadbd | mysqld)
		setup_env "$@"
		if [ "$EUID" = 0 ]; then
			mkdir -p /run/mysqld "$DATADIR"
			chown mysql:mysql /run/mysqld
			[ "$(stat -c %U "$DATADIR")" = mysql ] || chown -R mysql:mysql "$DATADIR"
			exec setpriv --reuid=mysql --regid=mysql --init-groups "${BASH_SOURCE[0]}" "$@"
		fi
		SETUP_SQL=""
		if [ ! -d "$DATADIR/mysql" ]; then
			initialize "$@"
		fi
		unset MARIADB_ROOT_PASSWORD MARIADB_PASSWORD
		exec_server "$@"
		;;
esac
exec "$@"
