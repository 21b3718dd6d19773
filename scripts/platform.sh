#!/usr/bin/env bash
# The test platform (../shared/DESIGN.md, third edition; docs/platform.md):
# a real etcd and kube-apiserver built by scripts/install-platform.sh,
# on loopback only, with TLS, a service-account signing key and the RBAC
# authorizer.
#
#   bash scripts/platform.sh up --dir DIR     # start; writes DIR/kubeconfig
#   bash scripts/platform.sh down --dir DIR   # stop both, remove DIR
#
# `up` writes, besides the admin kubeconfig (a static token in the
# system:masters group): DIR/env (APISERVER_URL, CA_FILE, ADMIN_TOKEN_FILE),
# DIR/pki (the CA, the serving certificate, the service-account key pair)
# and DIR/*.log. It waits until /readyz answers (60 s at most) and exits 1
# with the end of the logs when it does not. `down` stops what `up`
# started (SIGTERM, then SIGKILL after 5 s) and is safe to run twice or
# after a failed `up`.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  echo "usage: platform.sh up|down --dir DIR" >&2
  exit 2
}
[ $# -ge 3 ] && [ "$2" = --dir ] || usage
action=$1 dir=$3
case $action in up | down) ;; *) usage ;; esac
if [ "${4:-}" = --operator ]; then
  echo "platform.sh: --operator: the Prometheus Operator is not part of the platform yet (docs/platform.md, 'Not yet')" >&2
  exit 2
fi
[ $# -le 3 ] || usage

# Running: a zombie (exited, not yet reaped by its parent) is not.
running() {
  local state
  state=$(sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

stop_all() {
  local pidfile pid
  for pidfile in "$dir"/*.pid; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || true
  done
  for _ in $(seq 50); do
    local alive=0
    for pidfile in "$dir"/*.pid; do
      [ -f "$pidfile" ] && running "$(cat "$pidfile")" && alive=1
    done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pidfile in "$dir"/*.pid; do
    [ -f "$pidfile" ] || continue
    kill -KILL "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

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

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

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

etcd_port=$(free_port)
peer_port=$(free_port)
api_port=$(free_port)

"$etcd_bin" --name test --data-dir "$dir/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" \
  --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "test=http://127.0.0.1:$peer_port" \
  --unsafe-no-fsync >"$dir/etcd.log" 2>&1 &
echo $! >"$dir/etcd.pid"

# No controller manager runs: the ServiceAccount admission plugin (which
# waits for each namespace's default account) is off, and pods are created
# with their nodeName set. The service range is never routed; it is in the
# benchmarking range like every address the tests use.
"$apiserver_bin" \
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
  --profiling=false >"$dir/kube-apiserver.log" 2>&1 &
echo $! >"$dir/kube-apiserver.pid"

url=https://127.0.0.1:$api_port
ready=0
for _ in $(seq 600); do
  if curl -sf --cacert "$dir/pki/ca.crt" -H "Authorization: Bearer $admin_token" \
    "$url/readyz" >/dev/null 2>&1; then
    ready=1
    break
  fi
  running "$(cat "$dir/kube-apiserver.pid")" || break
  sleep 0.1
done
if [ "$ready" != 1 ]; then
  echo "platform: kube-apiserver did not become ready at $url; the end of its log and etcd's:" >&2
  tail -n 20 "$dir/kube-apiserver.log" "$dir/etcd.log" >&2
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
