#!/usr/bin/env bash
# The test platform (../shared/DESIGN.md, third edition; docs/platform.md):
# a real etcd and kube-apiserver built by scripts/install-platform.sh,
# on loopback only, with TLS, a service-account signing key and the RBAC
# authorizer.
#
#   bash scripts/platform.sh up --dir DIR     # start; writes DIR/kubeconfig
#   bash scripts/platform.sh up --dir DIR --operator
#                                             # also the Prometheus Operator
#   bash scripts/platform.sh down --dir DIR   # stop all, remove DIR
#   bash scripts/platform.sh stop-apiserver --dir DIR   # kube-apiserver only
#   bash scripts/platform.sh start-apiserver --dir DIR  # again, same port
#
# The two apiserver subcommands take the API server away mid-watch and
# bring it back where its clients expect it (same port, certificates and
# flags; etcd and its data stay). TRAINSCOPE_PLATFORM_APISERVER_ARGS adds
# flags to kube-apiserver at `up` (an audit log, `--watch-cache-sizes`,
# `--etcd-compaction-interval`); `start-apiserver` reuses them.
#
# `up` writes, besides the admin kubeconfig (a static token in the
# system:masters group): DIR/env (APISERVER_URL, CA_FILE, ADMIN_TOKEN_FILE),
# DIR/pki (the CA, the serving certificate, the service-account key pair)
# and DIR/*.log. It waits until /readyz answers (60 s at most) and exits 1
# with the end of the logs when it does not. `down` stops what `up`
# started (SIGTERM, then SIGKILL after 5 s) and is safe to run twice or
# after a failed `up`.
#
# With --operator, `up` also installs the Prometheus Operator's CRDs and
# starts the Operator (built by scripts/install-platform.sh) against the
# API server with the admin kubeconfig, its web endpoint on a free
# loopback port (OPERATOR_URL in DIR/env, log DIR/prometheus-operator.log).
# No kubelet runs: the StatefulSets it makes for a Prometheus never get
# pods; what it generates (the Secret prometheus-<name>, the rule
# ConfigMaps) is what the tests read.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  echo "usage: platform.sh up --dir DIR [--operator] | down|stop-apiserver|start-apiserver --dir DIR" >&2
  exit 2
}
[ $# -ge 3 ] && [ "$2" = --dir ] || usage
action=$1 dir=$3
case $action in up | down | stop-apiserver | start-apiserver) ;; *) usage ;; esac
with_operator=0
if [ "${4:-}" = --operator ] && [ "$action" = up ]; then
  with_operator=1
  set -- "$1" "$2" "$3"
fi
[ $# -le 3 ] || usage

# Running: a zombie (exited, not yet reaped by its parent) is not.
running() {
  local state
  state=$(sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# Stops the processes of the given pid files: SIGTERM, SIGKILL after 5 s.
stop_pidfiles() {
  local pidfile pid
  for pidfile in "$@"; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || true
  done
  for _ in $(seq 50); do
    local alive=0
    for pidfile in "$@"; do
      [ -f "$pidfile" ] && running "$(cat "$pidfile")" && alive=1
    done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pidfile in "$@"; do
    [ -f "$pidfile" ] || continue
    kill -KILL "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
  done
}
# The API server first: with etcd gone it waits out the SIGKILL grace
# (5 s) for its storage; alone it stops in about a second.
stop_all() {
  stop_pidfiles "$dir/kube-apiserver.pid"
  stop_pidfiles "$dir"/*.pid
}

# kube-apiserver as `up` recorded it (DIR/kube-apiserver.cmd), in the
# background; then waits for /readyz at $1 (60 s at most).
start_apiserver() {
  bash "$dir/kube-apiserver.cmd" >>"$dir/kube-apiserver.log" 2>&1 &
  echo $! >"$dir/kube-apiserver.pid"
  for _ in $(seq 600); do
    if curl -sf --cacert "$dir/pki/ca.crt" -H "Authorization: Bearer $(cat "$dir/admin.token")" \
      "$1/readyz" >/dev/null 2>&1; then
      return 0
    fi
    running "$(cat "$dir/kube-apiserver.pid")" || break
    sleep 0.1
  done
  echo "platform: kube-apiserver did not become ready at $1; the end of its log and etcd's:" >&2
  tail -n 20 "$dir/kube-apiserver.log" "$dir/etcd.log" >&2
  return 1
}

case $action in
  stop-apiserver)
    stop_pidfiles "$dir/kube-apiserver.pid"
    exit 0
    ;;
  start-apiserver)
    [ -f "$dir/kube-apiserver.cmd" ] || { echo "platform: no platform in $dir" >&2; exit 1; }
    dir=$(cd "$dir" && pwd)
    start_apiserver "$(sed -n 's/^APISERVER_URL=//p' "$dir/env")"
    exit $?
    ;;
esac

if [ "$action" = down ]; then
  [ -d "$dir" ] || exit 0
  stop_all
  rm -rf "$dir"
  exit 0
fi

bash "$repo/scripts/install-platform.sh" >&2
etcd_bin=$(bash "$repo/scripts/install-platform.sh" --print | awk '$1 == "etcd" {print $2}')
apiserver_bin=$(bash "$repo/scripts/install-platform.sh" --print | awk '$1 == "kube-apiserver" {print $2}')

[ -d "$dir" ] && stop_all
mkdir -p "$dir/pki" "$dir/etcd"
dir=$(cd "$dir" && pwd)

# N distinct free loopback ports, one per line: every socket stays bound
# until all are chosen, since the kernel hands a port it just freed out
# again (two calls once gave etcd's peer port to kube-apiserver too).
# Ports for the servers, below the kernel's ephemeral range: a port the
# kernel hands out for bind(0) lies inside it, where any connect() (the
# other scenarios' agents, API servers and etcds) may take it before etcd
# binds it (CI saw "bind: address already in use" on etcd's peer port).
# Random ones from 10000 up to the range's start, each checked by binding
# it, held until all are chosen so they differ.
free_ports() {
  python3 -c 'import random, socket, sys
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
top = low - 1 if low > 11000 else 65535
held = []
while len(held) < int(sys.argv[1]):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", random.randint(10000, top)))
        held.append(s)
    except OSError:
        s.close()
print("\n".join(str(s.getsockname()[1]) for s in held))' "$1"
}
free_port() { free_ports 1; }

make_pki() {
  local pki=$dir/pki
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=trainscope-test-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
    -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n' >"$pki/san.ext"
  openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
    -CAcreateserial -days 2 -extfile "$pki/san.ext" -out "$pki/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

make_pki
admin_token=$(openssl rand -hex 24)
printf '%s\n' "$admin_token" >"$dir/admin.token"
printf '%s,admin,admin-uid,system:masters\n' "$admin_token" >"$dir/tokens.csv"

# Ports are only checked free, not held: another test's server (a
# scenario's etcd beside this one) can take one before etcd binds it. etcd
# fails at once then ("address already in use"); it is started again on
# fresh ports, up to 5 times.
start_etcd() {
  local try
  for try in 1 2 3 4 5; do
    { read -r etcd_port; read -r peer_port; } < <(free_ports 2)
    rm -rf "$dir/etcd"
    "$etcd_bin" --name test --data-dir "$dir/etcd" \
      --listen-client-urls "http://127.0.0.1:$etcd_port" \
      --advertise-client-urls "http://127.0.0.1:$etcd_port" \
      --listen-peer-urls "http://127.0.0.1:$peer_port" \
      --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
      --initial-cluster "test=http://127.0.0.1:$peer_port" \
      --unsafe-no-fsync >"$dir/etcd.log" 2>&1 &
    echo $! >"$dir/etcd.pid"
    for _ in $(seq 300); do
      if curl -sf "http://127.0.0.1:$etcd_port/health" >/dev/null 2>&1; then
        return 0
      fi
      running "$(cat "$dir/etcd.pid")" || break
      sleep 0.1
    done
    if ! grep -q "address already in use" "$dir/etcd.log"; then
      echo "platform: etcd did not start on 127.0.0.1:$etcd_port; the end of its log:" >&2
      tail -n 20 "$dir/etcd.log" >&2
      return 1
    fi
    stop_pidfiles "$dir/etcd.pid"
    echo "platform: etcd's port was taken (try $try of 5); new ports" >&2
  done
  return 1
}

if ! start_etcd; then
  stop_all
  exit 1
fi
api_port=$(free_port)

# No controller manager runs: the ServiceAccount admission plugin (which
# waits for each namespace's default account) is off, and pods are created
# with their nodeName set. The service range is never routed; it is in the
# benchmarking range like every address the tests use. `exec`: the pid
# file names the server itself, not a shell.
printf 'exec %q' "$apiserver_bin" >"$dir/kube-apiserver.cmd"
# shellcheck disable=SC2086 # the extra flags are split on purpose
printf ' %q' \
  --etcd-servers "http://127.0.0.1:$etcd_port" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
  --tls-cert-file "$dir/pki/apiserver.crt" --tls-private-key-file "$dir/pki/apiserver.key" \
  --client-ca-file "$dir/pki/ca.crt" \
  --token-auth-file "$dir/tokens.csv" \
  --authorization-mode RBAC \
  --service-account-issuer https://kubernetes.default.svc \
  --service-account-key-file "$dir/pki/sa.pub" \
  --service-account-signing-key-file "$dir/pki/sa.key" \
  --service-cluster-ip-range 198.19.255.0/24 \
  --disable-admission-plugins ServiceAccount \
  --profiling=false ${TRAINSCOPE_PLATFORM_APISERVER_ARGS:-} >>"$dir/kube-apiserver.cmd"

url=https://127.0.0.1:$api_port
if ! start_apiserver "$url"; then
  stop_all
  exit 1
fi

cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: $url
    certificate-authority: $dir/pki/ca.crt
users:
- name: admin
  user:
    token: $admin_token
contexts:
- name: test
  context: {cluster: test, user: admin}
current-context: test
EOF
cat >"$dir/env" <<EOF
APISERVER_URL=$url
CA_FILE=$dir/pki/ca.crt
ADMIN_TOKEN_FILE=$dir/admin.token
EOF
echo "platform: kube-apiserver $url ready (etcd on 127.0.0.1:$etcd_port); kubeconfig $dir/kubeconfig" >&2

# The Prometheus Operator: its CRDs first (server-side: the Prometheus CRD
# is larger than the annotation a client-side apply keeps), then the
# Operator, which finds the CRDs at start. Ready when /healthz answers.
start_operator() {
  local tools operator_bin crds port op_url
  tools=$(bash "$repo/scripts/install-platform.sh" --print)
  operator_bin=$(awk '$1 == "prometheus-operator" {print $2}' <<<"$tools")
  crds=$(awk '$1 == "prometheus-operator-crds" {print $2}' <<<"$tools")
  command -v kubectl >/dev/null || {
    echo "platform: --operator needs kubectl (docs/deploy.md, 'Tests')" >&2
    return 1
  }
  kubectl --kubeconfig "$dir/kubeconfig" apply --server-side -f "$crds" >"$dir/crds.log" 2>&1 &&
    kubectl --kubeconfig "$dir/kubeconfig" wait --for condition=established --timeout 60s \
      -f "$crds" >>"$dir/crds.log" 2>&1 || {
    echo "platform: installing the Prometheus Operator's CRDs failed:" >&2
    tail -n 20 "$dir/crds.log" >&2
    return 1
  }
  port=$(free_port)
  KUBECONFIG=$dir/kubeconfig "$operator_bin" --web.listen-address "127.0.0.1:$port" \
    >"$dir/prometheus-operator.log" 2>&1 &
  echo $! >"$dir/prometheus-operator.pid"
  op_url=http://127.0.0.1:$port
  for _ in $(seq 300); do
    if curl -sf "$op_url/healthz" >/dev/null 2>&1; then
      echo "OPERATOR_URL=$op_url" >>"$dir/env"
      echo "platform: prometheus-operator ready at $op_url" >&2
      return 0
    fi
    running "$(cat "$dir/prometheus-operator.pid")" || break
    sleep 0.1
  done
  echo "platform: the Prometheus Operator did not become ready at $op_url; the end of its log:" >&2
  tail -n 20 "$dir/prometheus-operator.log" >&2
  return 1
}
if [ "$with_operator" = 1 ] && ! start_operator; then
  stop_all
  exit 1
fi
