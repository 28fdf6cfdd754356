#!/usr/bin/env bash
# Installs the distribution packages stackbench needs, by purpose:
#
#   scripts/install-system.sh run    # (the default; scripts/setup.sh, `make run`) what running
#                                    # needs: web servers, PHP, data stores, the reference load
#                                    # generators (wrk, ab), the C++ libraries for cpp-beast, and
#                                    # the unprivileged system user `stackbench` that every server
#                                    # runs as when stackbench is root
#   scripts/install-system.sh test   # (scripts/setup-test.sh, `make test`) what only the tests
#                                    # need on top: Chromium for the report's browser test, the
#                                    # SSH server whose sshd binary scripts/testhosts.sh starts
#
# Idempotent: packages already present are left alone, apt is only called when something is
# missing, and an existing user is kept.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

# The account stack and service processes run as (see stackbench/lab/privilege.py): a system
# user with its own group, no login shell, no home directory (servers get HOME in their run
# directory). It owns nothing but the run directories stackbench hands it.
STACK_USER=stackbench
ensure_stack_user() {
  if getent passwd "$STACK_USER" >/dev/null; then
    echo "stack user: $STACK_USER exists"
    return
  fi
  if [ -n "$SUDO" ] && ! command -v sudo >/dev/null; then
    echo "error: creating the user $STACK_USER needs root or sudo" >&2
    exit 1
  fi
  local nologin=/usr/sbin/nologin
  [ -x "$nologin" ] || nologin=/bin/false
  $SUDO useradd --system --user-group --no-create-home --home-dir /nonexistent \
    --shell "$nologin" --comment "stackbench servers" "$STACK_USER"
  echo "stack user: created $STACK_USER"
}

case "${1:-run}" in
  run | test) PURPOSE="${1:-run}" ;;
  *) echo "usage: $0 [run|test]" >&2; exit 2 ;;
esac

RUN_PACKAGES=(
  nginx
  php-cli php-fpm php-mysql php-redis php-memcached
  apache2 libapache2-mod-php
  mariadb-server mariadb-client redis-server memcached
  wrk apache2-utils
  libboost-dev g++ libssl-dev nlohmann-json3-dev libmariadb-dev libhiredis-dev libmemcached-dev
  maven openjdk-17-jdk-headless
  python3 python3-venv  # the python-uvicorn stack (its packages come from its own lock file)
  procps util-linux iproute2 psmisc
  openssh-client  # multi-host runs: stackbench reaches the other hosts over ssh
)
TEST_PACKAGES=(
  openssh-server  # only its sshd binary: scripts/testhosts.sh, the multi-host tests' hosts
  chromium  # headless browser for the report's browser test (tests/report/test_browser.py)
)

missing=()
add_missing() {
  local pkg
  for pkg in "$@"; do
    if [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" != "install ok installed" ]; then
      missing+=("$pkg")
    fi
  done
}

if [ "$PURPOSE" = run ]; then
  ensure_stack_user
  add_missing "${RUN_PACKAGES[@]}"
  # opcache is packaged per PHP version (php8.2-opcache ...): ask the installed PHP which one.
  # (grep reads all of php's output: with pipefail, `grep -q` stopping early would make php's
  # SIGPIPE read as "no opcache", and every setup would call apt.)
  if command -v php >/dev/null && ! php -m 2>/dev/null | grep -i '^zend opcache$' >/dev/null; then
    missing+=("php$(php -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')-opcache")
  fi
else
  add_missing "${TEST_PACKAGES[@]}"
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages ($PURPOSE): all present"
  exit 0
fi

new_sshd=0
for pkg in "${missing[@]}"; do
  if [ "$pkg" = openssh-server ]; then new_sshd=1; fi
done

if [ -n "$SUDO" ] && ! command -v sudo >/dev/null; then
  echo "error: installing ${missing[*]} needs root or sudo" >&2
  exit 1
fi

# stackbench starts its own private instances of nginx, Apache, MariaDB, Redis and memcached
# on loopback; the distribution's system-wide services would only compete for CPU, so do not
# let the package scripts start them (a policy-rc.d that already exists is respected).
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod +x "$policy"
  created_policy=1
fi
cleanup() { if [ "$created_policy" = 1 ]; then $SUDO rm -f "$policy"; fi; }
trap cleanup EXIT

echo "system packages ($PURPOSE): installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# openssh-server is installed only for its sshd binary: scripts/testhosts.sh starts private
# sshds inside network namespaces, each on its own address and config. A machine that did not
# run an SSH server before must not get one listening on every interface because of stackbench,
# so when this run installed the package, its system service is disabled and stopped (the
# policy-rc.d above kept the package from starting it, but the package still enables it for
# the next boot). A machine that already had openssh-server is left exactly as it was: it is
# how its owner logs in, and how `stackbench hosts setup` reaches it.
if [ "$new_sshd" = 1 ]; then
  if [ -d /run/systemd/system ]; then
    echo "openssh-server: newly installed; disabling its system service (ssh.service, ssh.socket)"
    $SUDO systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || true
  elif command -v update-rc.d >/dev/null && [ -e /etc/init.d/ssh ]; then
    echo "openssh-server: newly installed; disabling its boot-time start (update-rc.d)"
    $SUDO update-rc.d ssh disable >/dev/null 2>&1 || true
    # Only the system sshd (its own pid file); a policy-rc.d that allowed starts may have run it.
    $SUDO /etc/init.d/ssh stop >/dev/null 2>&1 || true
  fi
fi
