#!/bin/sh
# Starts Apache (mod_php, prefork) in the foreground with a static pool of
# WORKERS x PROCESSES_PER_WORKER children; manifest templates cannot multiply.
# usage: start-apache.sh APACHE_BINARY RUN_DIR
#   (WORKERS, PROCESSES_PER_WORKER, APACHE_USER, STACK_DIR, FIXTURES_DIR from the env)
set -eu
apache=$1
run_dir=$2

for name in WORKERS PROCESSES_PER_WORKER; do
    eval "value=\${$name:-}"
    case $value in
        ''|*[!0-9]*|0) echo "start-apache.sh: $name must be a positive integer, got '$value'" >&2; exit 2 ;;
    esac
done
export APACHE_PROCESSES=$((WORKERS * PROCESSES_PER_WORKER))

# mod_php's file name carries the PHP version (Debian: libphp8.2.so); take the newest.
PHP_MODULE=$(ls /usr/lib/apache2/modules/libphp8*.so /usr/lib/apache2/modules/libphp.so 2>/dev/null | sort -V | tail -n 1)
if [ -z "$PHP_MODULE" ]; then
    echo "start-apache.sh: no mod_php in /usr/lib/apache2/modules; install libapache2-mod-php" >&2
    exit 2
fi
export PHP_MODULE

# Read the rendered stackbench.ini after the distribution's conf.d (leading ':').
export PHP_INI_SCAN_DIR=":$run_dir"

# As root, the children run as APACHE_USER: fail now, with the reason, if that user
# cannot read the code or the fixtures (instead of answering 500 to every request).
if [ "$(id -u)" = 0 ]; then
    for file in "$STACK_DIR/../php-common/public/index.php" "$STACK_DIR/../php-common/src/Router.php" \
                "$FIXTURES_DIR/demo.txt" "$FIXTURES_DIR/random-64k.bin"; do
        if ! runuser -u "$APACHE_USER" -- test -r "$file"; then
            echo "start-apache.sh: Apache children run as '$APACHE_USER' but cannot read $file;" \
                 "make the checkout readable by that user (e.g. chmod o+rx on its parent directories)" >&2
            exit 2
        fi
    done
fi

exec "$apache" -f "$run_dir/apache2.conf" -DFOREGROUND
