#!/usr/bin/env bash
# Test hosts for multi-host runs: network namespaces on this machine, each with its own sshd.
#
#   scripts/testhosts.sh up N [--delay MS]   # N hosts sbh1..sbhN (down first: idempotent)
#   scripts/testhosts.sh down                # remove them: namespaces, bridge, sshds, state
#   scripts/testhosts.sh status              # what exists now
#
# Host i is the namespace sbh<i> at 10.231.0.(10+i) (h1 = 10.231.0.11), joined to this machine
# (the controller, 10.231.0.1 on the bridge sbbr0) by a veth pair. Each runs its own sshd: its
# own generated ed25519 host key, config and PidFile, listening only on its own address, key-only
# root login with a generated client key, no forwarding. --delay MS adds a netem delay to every
# packet a host sends: round trip controller<->host MS, host<->host 2*MS.
#
# Everything lives in /run/stackbench-testhosts/ (0700): id_ed25519 (the client key),
# known_hosts (the hosts' real keys), hosts.toml (for `stackbench hosts check --hosts ...` and
# suites), and one directory per host (sshd_config, host key, sshd.pid, sshd.log).
# The namespaces share this machine's filesystem and clock, so the remote `stackbench` is this
# checkout's: .venv/bin/stackbench after `make setup`; without it, STACKBENCH_PYTHON (or
# .venv/bin/python) runs `-m stackbench` with this checkout on PYTHONPATH. STACKBENCH_LOAD,
# STACKBENCH_BUILD_DIR and STACKBENCH_STACKS_DIR, when set, are passed on to it.
# Needs root, iproute2, openssh-server (`make setup-test` installs it) and, for --delay,
# tc with the netem qdisc. Every wait is bounded.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd -P)"
STATE=/run/stackbench-testhosts
BRIDGE=sbbr0
PREFIX=10.231.0
SSHD=/usr/sbin/sshd
MAX_HOSTS=50
MAX_DELAY_MS=10000

die() { echo "testhosts: $*" >&2; exit 1; }

usage() {
  echo "usage: $0 up N [--delay MS] | down | status" >&2
  exit 2
}

need_root() {
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces and sshd): run it with sudo"
}

need_tools() {
  command -v ip >/dev/null || die "ip not found: apt-get install iproute2"
  command -v ssh-keygen >/dev/null || die "ssh-keygen not found: apt-get install openssh-client"
  [ -x "$SSHD" ] || die "$SSHD not found: run make setup-test (installs openssh-server)"
}

# Namespaces this script created: sbh1, sbh2 ... (an exact pattern, nothing else is touched).
our_namespaces() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^sbh[0-9]+$' || true
}

# Waits up to $1 tenths of a second for the command after it to succeed.
wait_until() {
  local tenths="$1"; shift
  local i
  for ((i = 0; i < tenths; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  return 1
}

# Stops processes: TERM, up to 3 s for all of them to go, then KILL.
stop_pids() {
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null || true
  local pid
  if ! wait_until 30 bash -c 'for p in "$@"; do kill -0 "$p" 2>/dev/null && exit 1; done; exit 0' _ "$@"; then
    for pid in "$@"; do kill -KILL "$pid" 2>/dev/null || true; done
  fi
}

# The pid in a host's PidFile if that process is still the sshd started with that host's config
# (a stale file may name a pid reused by another process: that one is left alone).
sshd_pid() {
  local dir="$1" pid
  [ -f "$dir/sshd.pid" ] || return 0
  pid="$(head -c 20 "$dir/sshd.pid" | tr -dc '0-9')"
  [ -n "$pid" ] || return 0
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-f $dir/sshd_config"; then
    echo "$pid"
  fi
}

down() {
  local ns dir pids=()
  for dir in "$STATE"/sbh*; do
    [ -d "$dir" ] && pids+=($(sshd_pid "$dir"))
  done
  stop_pids "${pids[@]}"
  for ns in $(our_namespaces); do
    # Whatever is still running in the namespace (sessions, agents, servers): it goes with it.
    stop_pids $(ip netns pids "$ns" 2>/dev/null)
    ip netns delete "$ns" 2>/dev/null || true
  done
  # Deleting a namespace deletes its veth end, and so the pair; these are leftovers of a crash.
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 \
                | grep -E '^sbh[0-9]+v$' || true); do
    ip link delete "$link" 2>/dev/null || true
  done
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link delete "$BRIDGE" type bridge; fi
  rm -rf "$STATE"
}

# A TOML basic string.
toml_string() {
  local text="${1//\\/\\\\}"
  printf '"%s"' "${text//\"/\\\"}"
}

# The remote stackbench command, as a TOML value: a string (one program) or a list (argv).
# The namespaces are this machine, so the variables that point this stackbench at another
# loader, build cache or stacks folder are handed to the remote one too.
stackbench_command() {
  local words=() name
  for name in STACKBENCH_LOAD STACKBENCH_BUILD_DIR STACKBENCH_STACKS_DIR; do
    if [ -n "${!name:-}" ]; then words+=("$name=${!name}"); fi
  done
  if [ -x "$REPO/.venv/bin/stackbench" ]; then
    words+=("$REPO/.venv/bin/stackbench")
  else
    local python="${STACKBENCH_PYTHON:-$REPO/.venv/bin/python}"
    [ -x "$python" ] || die "no $REPO/.venv/bin/stackbench: run make setup first (or set" \
      "STACKBENCH_PYTHON to a python that has stackbench's dependencies)"
    words+=("PYTHONPATH=$REPO" "$python" -m stackbench)
  fi
  if [ ${#words[@]} -eq 1 ]; then
    toml_string "${words[0]}"
    return
  fi
  local out="[$(toml_string /usr/bin/env)" word
  for word in "${words[@]}"; do out+=", $(toml_string "$word")"; done
  printf '%s]' "$out"
}

write_sshd_config() {
  local dir="$1" address="$2"
  cat >"$dir/sshd_config" <<EOF
# sshd of the test host $address (scripts/testhosts.sh): key-only root login, no forwarding.
ListenAddress $address:22
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $STATE/authorized_keys
AllowUsers root
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitEmptyPasswords no
HostbasedAuthentication no
UsePAM no
StrictModes yes
X11Forwarding no
AllowAgentForwarding no
AllowTcpForwarding no
AllowStreamLocalForwarding no
PermitTunnel no
PermitUserEnvironment no
PrintMotd no
# A controller multiplexes its sessions over one connection.
MaxSessions 64
MaxStartups 64:30:128
# A cut link is noticed from this side too (15 s).
ClientAliveInterval 5
ClientAliveCountMax 3
LogLevel INFO
EOF
}

start_host() {
  local i="$1" delay_ms="$2"
  local ns="sbh$i" veth="sbh${i}v" address="$PREFIX.$((10 + i))" dir="$STATE/sbh$i"
  ip netns add "$ns"
  ip link add "$veth" type veth peer name eth0 netns "$ns"
  ip link set "$veth" master "$BRIDGE" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$address/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route add default via "$PREFIX.1"
  if [ "$delay_ms" -gt 0 ]; then
    ip netns exec "$ns" tc qdisc add dev eth0 root netem delay "${delay_ms}ms" \
      || die "--delay needs the netem qdisc, which this kernel lacks (CONFIG_NET_SCH_NETEM;" \
             "try modprobe sch_netem): run without --delay"
  fi

  mkdir -m 0700 "$dir"
  ssh-keygen -q -t ed25519 -N '' -C "stackbench-testhost-$ns" -f "$dir/ssh_host_ed25519_key"
  write_sshd_config "$dir" "$address"
  "$SSHD" -t -f "$dir/sshd_config" || die "$ns: sshd refused its config $dir/sshd_config"
  ip netns exec "$ns" "$SSHD" -f "$dir/sshd_config" -E "$dir/sshd.log"
  wait_until 50 test -s "$dir/sshd.pid" || die "$ns: sshd wrote no PidFile in 5 s (see $dir/sshd.log)"
  wait_until 50 bash -c "ip netns exec $ns ss -Hltn 'sport = :22' | grep -q ." \
    || die "$ns: sshd is not listening on $address:22 after 5 s (see $dir/sshd.log)"
  # Port 22 is the default, so the plain address is the known_hosts name ssh looks up.
  echo "$address $(cut -d' ' -f1,2 "$dir/ssh_host_ed25519_key.pub")" >>"$STATE/known_hosts"
  cat >>"$STATE/hosts.toml" <<EOF

[hosts.h$i]
address = "$address"
user = "root"
port = 22
identity = "$STATE/id_ed25519"
known_hosts = "$STATE/known_hosts"
checkout = $(toml_string "$REPO")
stackbench = $(stackbench_command)
EOF
}

up() {
  local count="$1" delay_ms="$2"
  down
  # A failure half-way leaves nothing behind.
  trap 'echo "testhosts: up failed; removing what was created" >&2; down' EXIT
  mkdir -m 0700 "$STATE"
  # sshd's privilege separation directory (root-owned, not group/world writable).
  mkdir -p /run/sshd
  chmod 0755 /run/sshd
  ssh-keygen -q -t ed25519 -N '' -C stackbench-testhosts -f "$STATE/id_ed25519"
  cp "$STATE/id_ed25519.pub" "$STATE/authorized_keys"
  chmod 0600 "$STATE/authorized_keys"
  : >"$STATE/known_hosts"
  printf '# Written by scripts/testhosts.sh up %s: network-namespace hosts on this machine.\n' \
    "$count" >"$STATE/hosts.toml"

  ip link add "$BRIDGE" type bridge
  # Bridged packets skip the host's iptables (a FORWARD policy of DROP would cut the hosts off).
  ip link set "$BRIDGE" type bridge nf_call_iptables 0 2>/dev/null || true
  ip addr add "$PREFIX.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up

  local i
  for ((i = 1; i <= count; i++)); do start_host "$i" "$delay_ms"; done
  trap - EXIT
  echo "testhosts: $count host(s) up: $PREFIX.11..$PREFIX.$((10 + count))" \
       "(delay ${delay_ms} ms); hosts file: $STATE/hosts.toml"
}

status() {
  local ns pid count=0
  for ns in $(our_namespaces); do
    count=$((count + 1))
    local sshd="no sshd"
    pid="$(sshd_pid "$STATE/$ns")"
    if [ -n "$pid" ]; then sshd="sshd pid $pid"; fi
    local address
    address="$(ip -n "$ns" -o -4 addr show dev eth0 2>/dev/null | awk '{print $4}')"
    echo "$ns ${address:-no address} $sshd; processes: $(ip netns pids "$ns" | wc -l)"
  done
  if [ "$count" -eq 0 ]; then echo "testhosts: no test host"; fi
  if [ -f "$STATE/hosts.toml" ]; then echo "hosts file: $STATE/hosts.toml"; fi
}

[ $# -ge 1 ] || usage
command="$1"; shift
case "$command" in
  up)
    [ $# -ge 1 ] || usage
    count="$1"; shift
    delay_ms=0
    while [ $# -gt 0 ]; do
      case "$1" in
        --delay) [ $# -ge 2 ] || usage; delay_ms="$2"; shift 2 ;;
        *) usage ;;
      esac
    done
    [[ "$count" =~ ^[0-9]+$ ]] && [ "$count" -ge 1 ] && [ "$count" -le "$MAX_HOSTS" ] \
      || die "N must be a whole number from 1 to $MAX_HOSTS, got '$count'"
    [[ "$delay_ms" =~ ^[0-9]+$ ]] && [ "$delay_ms" -le "$MAX_DELAY_MS" ] \
      || die "--delay must be whole milliseconds from 0 to $MAX_DELAY_MS, got '$delay_ms'"
    need_root
    need_tools
    if [ "$delay_ms" -gt 0 ]; then command -v tc >/dev/null || die "tc not found: apt-get install iproute2"; fi
    up "$count" "$delay_ms"
    ;;
  down) need_root; down; echo "testhosts: down" ;;
  status) status ;;
  *) usage ;;
esac
