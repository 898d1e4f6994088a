#!/bin/bash
# Entry point of ecoready's lab MySQL image, written for the lab from the documented
# contract of the official `mysql` image so the probes drive both the same way:
#   MYSQL_ROOT_PASSWORD | MYSQL_ALLOW_EMPTY_PASSWORD | MYSQL_RANDOM_ROOT_PASSWORD (one needed),
#   MYSQL_ROOT_HOST (default %), MYSQL_DATABASE, MYSQL_USER + MYSQL_PASSWORD,
#   *_FILE variants, /docker-entrypoint-initdb.d/*.{sh,sql,sql.gz,sql.xz,sql.zst}.
# Initialisation: a copy of the data directory the image initialised with the defaults
# (/usr/share/mysql-template; `mysqld --initialize-insecure` when mysqld's arguments change
# what initialising makes), then the set-up (root's password and hosts, the database, the
# user). With init scripts, as the official image does it: a temporary server with
# --skip-networking runs the set-up and the scripts, and only then the real server starts
# and listens on TCP. Without them the real server runs the set-up from its --init-file (a
# pipe: the password never lands in a file) before it answers any client, so a container
# starts one server instead of two; what a client sees is the same. Arguments are mysqld's
# (`docker run IMAGE --opt` adds `--opt`). Time zone tables are not loaded (as with
# MYSQL_INITDB_SKIP_TZINFO): the image has no tzdata.
set -eo pipefail
shopt -s nullglob

# note, fail, the quoting, template_fits, one_start, stop_temp_server, run_init_scripts,
# write_init_cnf, exec_server: shared with the other server image (containers/shared/)
. /usr/local/lib/entrypoint-lib.sh

# file_env VAR: VAR from VAR or VAR_FILE (never both).
file_env() {
	local var=$1 file_var="${1}_FILE"
	if [ -n "${!var:-}" ] && [ -n "${!file_var:-}" ]; then
		fail "both $var and $file_var are set (they are exclusive)"
	fi
	local value=${!var:-}
	if [ -n "${!file_var:-}" ]; then
		[ -r "${!file_var}" ] || fail "$file_var points to ${!file_var}, which cannot be read"
		value=$(<"${!file_var}")
	fi
	unset "$file_var"
	export "$var=$value"
}

setup_env() {
	file_env MYSQL_ROOT_PASSWORD
	file_env MYSQL_ROOT_HOST
	file_env MYSQL_DATABASE
	file_env MYSQL_USER
	file_env MYSQL_PASSWORD
	: "${MYSQL_ROOT_HOST:=%}"
	DATADIR=/var/lib/mysql
	SOCKET=/var/run/mysqld/mysqld.sock
	for arg in "$@"; do
		case "$arg" in
			--datadir=*) DATADIR=${arg#--datadir=} ;;
			--socket=*) SOCKET=${arg#--socket=} ;;
		esac
	done
	INIT_CNF=/var/run/mysqld/.entrypoint-init.cnf
}

# Run SQL (stdin) against the temporary server as root over its socket.
init_sql() { mysql --defaults-extra-file="$INIT_CNF" --protocol=socket --socket="$SOCKET" "$@"; }

start_temp_server() {
	note "Starting temporary server"
	"$@" --skip-networking --socket="$SOCKET" --daemonize=OFF &
	TEMP_PID=$!
	for _ in $(seq 1 600); do
		if mysql --protocol=socket --socket="$SOCKET" -uroot --skip-password -e 'SELECT 1' >/dev/null 2>&1; then
			note "Temporary server started"
			return 0
		fi
		kill -0 "$TEMP_PID" 2>/dev/null || fail "the temporary server exited during initialisation"
		sleep 0.5
	done
	fail "the temporary server did not answer within 300 s"
}

TEMPLATE=/usr/share/mysql-template
# Options that change what `--initialize` makes: with any of them, initialise for real.
INIT_OPTIONS='lower_case_table_names|innodb_page_size|innodb_data_file_path|innodb_data_home_dir|innodb_undo_directory|innodb_log_group_home_dir|initialize|initialize_insecure'

# The set-up as SQL, one statement per line (as a server's --init-file reads it); not
# written to the binary log, so a replica or group member starts with no transaction.
setup_sql() {
	local root_pw
	root_pw=$(sql_string "$MYSQL_ROOT_PASSWORD")
	echo "SET @@SESSION.SQL_LOG_BIN=0;"
	echo "ALTER USER 'root'@'localhost' IDENTIFIED BY $root_pw;"
	if [ "$MYSQL_ROOT_HOST" != localhost ]; then
		echo "CREATE USER 'root'@$(sql_string "$MYSQL_ROOT_HOST") IDENTIFIED BY $root_pw;"
		echo "GRANT ALL ON *.* TO 'root'@$(sql_string "$MYSQL_ROOT_HOST") WITH GRANT OPTION;"
	fi
	if [ -n "$MYSQL_DATABASE" ]; then
		echo "CREATE DATABASE IF NOT EXISTS $(sql_name "$MYSQL_DATABASE");"
	fi
	if [ -n "$MYSQL_USER" ]; then
		echo "CREATE USER $(sql_string "$MYSQL_USER")@'%' IDENTIFIED BY $(sql_string "$MYSQL_PASSWORD");"
		if [ -n "$MYSQL_DATABASE" ]; then
			echo "GRANT ALL ON $(sql_name "$MYSQL_DATABASE").* TO $(sql_string "$MYSQL_USER")@'%';"
		fi
	fi
	echo "FLUSH PRIVILEGES;"
}

initialize() {
	if [ -z "$MYSQL_ROOT_PASSWORD" ] && [ -z "${MYSQL_ALLOW_EMPTY_PASSWORD:-}" ] && [ -z "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
		fail "Database is uninitialized and password option is not specified: set one of MYSQL_ROOT_PASSWORD, MYSQL_ALLOW_EMPTY_PASSWORD, MYSQL_RANDOM_ROOT_PASSWORD"
	fi
	if [ "$MYSQL_USER" = root ]; then
		fail "MYSQL_USER=\"root\": MYSQL_USER and MYSQL_PASSWORD are for configuring a regular user and cannot be used for the root user"
	fi
	if [ -n "$MYSQL_USER" ] && [ -z "$MYSQL_PASSWORD" ]; then
		fail "MYSQL_USER specified, but missing MYSQL_PASSWORD; MYSQL_USER will not be created"
	fi
	if [ -n "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
		MYSQL_ROOT_PASSWORD=$(random_password)
		note "GENERATED ROOT PASSWORD: $MYSQL_ROOT_PASSWORD"
	fi
	if template_fits "$@"; then
		note "Copying the initialized database files of $TEMPLATE"
		cp -a "$TEMPLATE/." "$DATADIR/"
	else
		note "Initializing database files"
		"$@" --initialize-insecure --default-time-zone=SYSTEM
	fi
	note "Database files initialized"

	if one_start "$@"; then
		SETUP_SQL=$(setup_sql)
		note "No init scripts: the server runs the set-up from its --init-file at its start"
		return 0
	fi
	start_temp_server "$@"
	setup_sql | mysql --protocol=socket --socket="$SOCKET" -uroot --skip-password
	write_init_cnf "$MYSQL_ROOT_PASSWORD"
	run_init_scripts "$MYSQL_DATABASE"
	stop_temp_server
	rm -f "$INIT_CNF"
	note "MySQL init process done. Ready for start up."
}

if [ "${1:0:1}" = '-' ]; then
	set -- mysqld "$@"
fi
if [ "$1" = mysqld ]; then
	setup_env "$@"
	if [ "$EUID" = 0 ]; then
		mkdir -p /var/run/mysqld "$DATADIR"
		chown mysql:mysql /var/run/mysqld
		[ "$(stat -c %U "$DATADIR")" = mysql ] || chown -R mysql:mysql "$DATADIR"
		exec setpriv --reuid=mysql --regid=mysql --init-groups "${BASH_SOURCE[0]}" "$@"
	fi
	SETUP_SQL=""
	if [ ! -d "$DATADIR/mysql" ]; then
		initialize "$@"
	fi
	unset MYSQL_ROOT_PASSWORD MYSQL_PASSWORD
	exec_server "$@"
fi
exec "$@"
