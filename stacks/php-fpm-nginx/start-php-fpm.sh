#!/bin/sh
# Starts php-fpm in the foreground with pm.max_children = WORKERS x CHILDREN_PER_WORKER.
# Manifest templates cannot multiply, so the product is computed here.
# usage: start-php-fpm.sh PHP_FPM_BINARY RUN_DIR LISTEN   (WORKERS, CHILDREN_PER_WORKER from
# the env; LISTEN is RUN_DIR/php-fpm.sock or 127.0.0.1:PORT, by the manifest's fastcgi)
set -eu
fpm=$1
run_dir=$2
case $3 in
    "$run_dir"/php-fpm.sock|127.0.0.1:[1-9]*) export FPM_LISTEN=$3 ;;
    *) echo "start-php-fpm.sh: LISTEN must be $run_dir/php-fpm.sock or 127.0.0.1:PORT, got '$3'" >&2; exit 2 ;;
esac

for name in WORKERS CHILDREN_PER_WORKER; do
    eval "value=\${$name:-}"
    case $value in
        ''|*[!0-9]*|0) echo "start-php-fpm.sh: $name must be a positive integer, got '$value'" >&2; exit 2 ;;
    esac
done
export FPM_MAX_CHILDREN=$((WORKERS * CHILDREN_PER_WORKER))

# Read the rendered stackbench.ini after the distribution's conf.d (leading ':').
export PHP_INI_SCAN_DIR=":$run_dir"

# stackbench starts this script as the unprivileged stack user, so master and children run as
# that user (no pool `user` directive needed) and share the owner-only socket with nginx.
# Without --allow-to-run-as-root, php-fpm refuses to start as root: a pool never runs as root.
exec "$fpm" --nodaemonize --fpm-config "$run_dir/php-fpm.conf"
