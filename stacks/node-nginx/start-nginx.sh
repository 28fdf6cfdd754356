#!/bin/sh
# Starts nginx in front of Node with the configuration UPSTREAM_KEEPALIVE asks for:
# 0 -> nginx-plain.conf (a plain proxy_pass, a new connection to Node per request),
# otherwise nginx.conf (upstream keep-alive with that many idle connections per worker).
# Manifest templates have no conditions and nginx rejects `keepalive 0`, so the choice is here.
# usage: start-nginx.sh NGINX_BINARY RUN_DIR   (UPSTREAM_KEEPALIVE from the env)
set -eu
nginx=$1
run_dir=$2

case ${UPSTREAM_KEEPALIVE:-} in
    ''|*[!0-9]*) echo "start-nginx.sh: UPSTREAM_KEEPALIVE must be a non-negative integer, got '${UPSTREAM_KEEPALIVE:-}'" >&2; exit 2 ;;
    0) conf=nginx-plain.conf ;;
    *) conf=nginx.conf ;;
esac

exec "$nginx" -p "$run_dir" -c "$run_dir/$conf" -e "$run_dir/nginx-error.log"
