#!/bin/sh
# The official haproxy image's entry point contract: a command that starts with an option
# is haproxy's; haproxy itself runs in master-worker mode (-W, reloads on SIGUSR2) in the
# foreground (-db). Anything else runs as given.
set -e
case "$1" in
  -*) set -- haproxy "$@" ;;
esac
if [ "$1" = haproxy ]; then
  shift
  set -- haproxy -W -db "$@"
fi
exec "$@"
