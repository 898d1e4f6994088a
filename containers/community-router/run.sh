#!/bin/bash
# The entry point contract of Oracle's community-router image: with the command
# `mysqlrouter`, bootstrap against the server (or InnoDB Cluster) at MYSQL_HOST:MYSQL_PORT
# as MYSQL_USER (or MYSQL_USER_FILE) with MYSQL_PASSWORD (or MYSQL_PASSWORD_FILE), into
# /tmp/mysqlrouter, then run the router on the configuration that made. Optional:
# MYSQL_INNODB_CLUSTER_MEMBERS (wait for that many ONLINE members), MYSQL_CREATE_ROUTER_USER
# (0: the router reuses MYSQL_USER instead of creating its own account),
# MYSQL_ROUTER_BOOTSTRAP_EXTRA_OPTIONS. Any other command runs as given.
set -e
if [ "$1" != mysqlrouter ]; then
  exec "$@"
fi
if [ -n "${MYSQL_USER_FILE:-}" ] && [ -f "$MYSQL_USER_FILE" ]; then
  MYSQL_USER=$(cat "$MYSQL_USER_FILE")
fi
password=${MYSQL_PASSWORD:-}
if [ -n "${MYSQL_PASSWORD_FILE:-}" ] && [ -f "$MYSQL_PASSWORD_FILE" ]; then
  password=$(cat "$MYSQL_PASSWORD_FILE")
fi
if [ -z "${MYSQL_HOST:-}" ] || [ -z "${MYSQL_PORT:-}" ] || [ -z "${MYSQL_USER:-}" ] || [ -z "$password" ]; then
  echo "[Entrypoint] MYSQL_HOST, MYSQL_PORT, MYSQL_USER (or MYSQL_USER_FILE) and MYSQL_PASSWORD (or MYSQL_PASSWORD_FILE) must be set. Exiting." >&2
  exit 1
fi
unset MYSQL_PASSWORD
secrets=$(mktemp -d)
trap 'rm -rf "$secrets"' EXIT  # exec below replaces the shell: removed before it too
printf '[client]\npassword="%s"\n' "$password" > "$secrets/client.cnf"
client=(mysql --defaults-extra-file="$secrets/client.cnf" -u "$MYSQL_USER" -h "$MYSQL_HOST" -P "$MYSQL_PORT")

tries=0
until (echo > "/dev/tcp/$MYSQL_HOST/$MYSQL_PORT") > /dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 12 ]; then
    echo "[Entrypoint] $MYSQL_HOST:$MYSQL_PORT did not answer. Exiting." >&2
    exit 1
  fi
  echo "[Entrypoint] Waiting for mysql server $MYSQL_HOST ($tries/12)"
  sleep "$tries"
done
if ! "${client[@]}" -e "SELECT 1" > /dev/null 2>&1; then
  echo "[Entrypoint] ERROR: Can not connect to database. Exiting." >&2
  exit 1
fi
if [ -n "${MYSQL_INNODB_CLUSTER_MEMBERS:-}" ]; then
  tries=0
  until [ "$("${client[@]}" -N -e "SELECT COUNT(*) >= $MYSQL_INNODB_CLUSTER_MEMBERS FROM performance_schema.replication_group_members WHERE MEMBER_STATE = 'ONLINE'" 2> /dev/null)" = 1 ]; do
    tries=$((tries + 1))
    if [ "$tries" -ge 12 ]; then
      echo "[Entrypoint] fewer than $MYSQL_INNODB_CLUSTER_MEMBERS members ONLINE. Exiting." >&2
      exit 1
    fi
    echo "[Entrypoint] Waiting for $MYSQL_INNODB_CLUSTER_MEMBERS cluster members ($tries/12)"
    sleep "$tries"
  done
fi
options=(--bootstrap "$MYSQL_USER@$MYSQL_HOST:$MYSQL_PORT" --directory /tmp/mysqlrouter --force)
# the bootstrap reads the password, then the new account's (or, reused, the same again)
answers=$(printf '%s\n%s\n' "$password" "$password")
if [ "${MYSQL_CREATE_ROUTER_USER:-1}" = 0 ]; then
  options+=(--account-create=never --account="$MYSQL_USER")
fi
if [ "$(id -u)" = 0 ]; then
  options+=(--user=mysqlrouter)
fi
# shellcheck disable=SC2086 # extra options are words
mysqlrouter "${options[@]}" ${MYSQL_ROUTER_BOOTSTRAP_EXTRA_OPTIONS:-} <<< "$answers"
rm -rf "$secrets"
sed -i -e 's/^logging_folder=.*$/logging_folder=/' /tmp/mysqlrouter/mysqlrouter.conf
echo "[Entrypoint] Starting mysql-router."
exec "$@" --config /tmp/mysqlrouter/mysqlrouter.conf
