# What the lab's MariaDB and MySQL entry points share, sourced by both
# (containers/mariadb/docker-entrypoint.sh, containers/mysql/docker-entrypoint.sh; the lab
# copies this file into both build contexts). Each entry point sets TEMPLATE, INIT_OPTIONS,
# SOCKET, INIT_CNF and defines init_sql before it calls these.

# Shell built-ins where they do the job (printf's time, $EUID, $SRANDOM): under emulation
# every process started costs tens of milliseconds of CPU.
note() { printf '%(%F %T)T [Note] [Entrypoint]: %s\n' -1 "$*"; }
fail() { printf '%(%F %T)T [ERROR] [Entrypoint]: %s\n' -1 "$*" >&2; exit 1; }

random_password() { # 32 alphanumerics from the kernel's random source (bash >= 5.1)
	local chars=ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 password="" i
	for ((i = 0; i < 32; i++)); do password+=${chars:SRANDOM % 62:1}; done
	printf '%s' "$password"
}

# one_line VAR VALUE: VALUE on one line, its \, line feeds and carriage returns written as
# \\, \n and \r (both SQL strings and option files read these escapes), into VAR
one_line() {
	local _v=${2//\\/\\\\}
	_v=${_v//$'\n'/\\n}
	printf -v "$1" '%s' "${_v//$'\r'/\\r}"
}

sql_string() { # a value quoted as an SQL string literal, on one line (--init-file reads lines)
	local s
	one_line s "$1"
	printf "'%s'" "${s//\'/\\\'}"
}

sql_name() { # an identifier quoted with backticks
	printf '`%s`' "${1//\`/\`\`}"
}

cnf_value() { # a value quoted for an option file, on one line
	local s
	one_line s "$1"
	printf '"%s"' "${s//\"/\\\"}"
}

option_name() { # --loose-innodb-page-size=16k -> innodb_page_size
	local name=${1#--}
	name=${name%%=*}
	name=${name//-/_}
	printf '%s' "${name#loose_}"
}

# template_fits SERVER ARGS...: the data directory made at build time ($TEMPLATE) is what
# initialising with these arguments would make (none of $INIT_OPTIONS among them).
template_fits() {
	[ -d "$TEMPLATE/mysql" ] || return 1
	local arg name
	for arg in "${@:2}"; do
		name=$(option_name "$arg")
		# InnoDB is the default engine: naming it (Galera nodes do) changes nothing
		if [ "$name" = default_storage_engine ] && [ "${arg#*=}" = InnoDB ]; then continue; fi
		if [[ $name =~ ^($INIT_OPTIONS)$ ]]; then return 1; fi
	done
}

# one_start SERVER ARGS...: the real server can run the set-up itself: no init scripts
# (they need a running server), no --init-file of the caller's, and not a Galera node (its
# set-up must not reach the cluster).
one_start() {
	local scripts=(/docker-entrypoint-initdb.d/*) arg
	[ ${#scripts[@]} -eq 0 ] || return 1
	for arg in "${@:2}"; do
		if [[ $(option_name "$arg") =~ ^(init_file|skip_grant_tables|wsrep_.*)$ ]]; then return 1; fi
	done
}

# write_init_cnf PASSWORD: root's option file for init_sql (the temporary server's scripts)
write_init_cnf() {
	umask 077
	printf '[client]\nuser=root\npassword=%s\n' "$(cnf_value "$1")" >"$INIT_CNF"
	umask 022
}

stop_temp_server() { # the one start_temp_server started (TEMP_PID)
	init_sql -e 'SHUTDOWN' >/dev/null 2>&1 || kill "$TEMP_PID"
	wait "$TEMP_PID" || true
	note "Temporary server stopped"
}

# run_init_scripts DATABASE: /docker-entrypoint-initdb.d/* against the temporary server
run_init_scripts() {
	local f
	for f in /docker-entrypoint-initdb.d/*; do
		case "$f" in
			*.sh) if [ -x "$f" ]; then note "running $f"; "$f"; else note "sourcing $f"; . "$f"; fi ;;
			*.sql) note "running $f"; init_sql ${1:+"$1"} <"$f" ;;
			*.sql.gz) note "running $f"; gunzip -c "$f" | init_sql ${1:+"$1"} ;;
			*.sql.xz) note "running $f"; xzcat "$f" | init_sql ${1:+"$1"} ;;
			*.sql.zst) note "running $f"; zstd -dc "$f" | init_sql ${1:+"$1"} ;;
			*) note "ignoring $f" ;;
		esac
	done
}

# exec_server SERVER ARGS...: the server in this process, reading $SETUP_SQL (when set)
# from its --init-file: a here-string is a pipe (bash >= 5.1, small text) the server reads
# and empties, so the passwords never land in a file.
exec_server() {
	note "Starting $*"
	if [ -n "$SETUP_SQL" ]; then
		exec 3<<<"$SETUP_SQL"
		SETUP_SQL=""
		exec "$@" --init-file=/dev/fd/3
	fi
	exec "$@"
}
