#!/bin/sh
# Starts Apache (mod_php, prefork) in the foreground with a static pool of
# WORKERS x PROCESSES_PER_WORKER children (or MAX_REQUEST_WORKERS when above 0); manifest
# templates cannot multiply.
# usage: start-apache.sh APACHE_BINARY RUN_DIR
#   (WORKERS, PROCESSES_PER_WORKER, MAX_REQUEST_WORKERS, PREFORK from the env)
set -eu
apache=$1
run_dir=$2

for name in WORKERS PROCESSES_PER_WORKER; do
    eval "value=\${$name:-}"
    case $value in
        ''|*[!0-9]*|0) echo "start-apache.sh: $name must be a positive integer, got '$value'" >&2; exit 2 ;;
    esac
done
# MAX_REQUEST_WORKERS > 0 sizes the pool directly (e.g. Debian's 150); 0 keeps the per-core size.
case ${MAX_REQUEST_WORKERS:-} in
    ''|*[!0-9]*) echo "start-apache.sh: MAX_REQUEST_WORKERS must be a non-negative integer, got '${MAX_REQUEST_WORKERS:-}'" >&2; exit 2 ;;
esac
if [ "$MAX_REQUEST_WORKERS" -gt 0 ]; then
    export APACHE_PROCESSES=$MAX_REQUEST_WORKERS
else
    export APACHE_PROCESSES=$((WORKERS * PROCESSES_PER_WORKER))
fi

# static: every child forked up front; dynamic: Debian's mpm_prefork.conf (5, 5-10 spare),
# never more than the pool.
smaller() { if [ "$1" -lt "$2" ]; then echo "$1"; else echo "$2"; fi; }
case ${PREFORK:-static} in
    static)
        APACHE_START=$APACHE_PROCESSES; APACHE_MIN_SPARE=$APACHE_PROCESSES
        APACHE_MAX_SPARE=$APACHE_PROCESSES ;;
    dynamic)
        APACHE_START=$(smaller 5 "$APACHE_PROCESSES"); APACHE_MIN_SPARE=$APACHE_START
        APACHE_MAX_SPARE=$(smaller 10 "$APACHE_PROCESSES") ;;
    *) echo "start-apache.sh: PREFORK must be static or dynamic, got '$PREFORK'" >&2; exit 2 ;;
esac
export APACHE_START APACHE_MIN_SPARE APACHE_MAX_SPARE

# mod_php's file name carries the PHP version (Debian: libphp8.2.so); take the newest.
PHP_MODULE=$(ls /usr/lib/apache2/modules/libphp8*.so /usr/lib/apache2/modules/libphp.so 2>/dev/null | sort -V | tail -n 1)
if [ -z "$PHP_MODULE" ]; then
    echo "start-apache.sh: no mod_php in /usr/lib/apache2/modules; install libapache2-mod-php" >&2
    exit 2
fi
export PHP_MODULE

# Read the rendered stackbench.ini after the distribution's conf.d (leading ':').
export PHP_INI_SCAN_DIR=":$run_dir"

# stackbench starts this script as its unprivileged stack user; as root, Apache would run its
# parent as root, so refuse rather than serve PHP from a root process tree.
if [ "$(id -u)" = 0 ]; then
    echo "start-apache.sh: refusing to start Apache as root; stackbench runs it as the" \
         "unprivileged stack user (create it with scripts/install-system.sh)" >&2
    exit 2
fi

exec "$apache" -f "$run_dir/apache2.conf" -DFOREGROUND
