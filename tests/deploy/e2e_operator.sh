#!/usr/bin/env bash
# End to end under Prometheus Operator label semantics, without a cluster:
# two real trainscope-agents (nodes node-a and node-b, each on a copy of the
# fixture host tests/fixtures/hosts/v2-systemd, --discovery file) scraped by
# a real Prometheus whose configuration is what the Operator generates for
# the shipped ServiceMonitor (or PodMonitor: --components podmonitor), with
# the shipped PrometheusRule loaded as the Operator loads it
# (tests/deploy/operator_config.mjs). ctr-worker-0 on node-a is CPU-throttled
# (40% of its CFS periods). tests/deploy/e2e_operator_check.mjs then checks
# the labels of the scraped series, the rules' output and alerts, a sample
# of dashboard queries and `trainscope report --prometheus`.
# With --components web-config the agents serve https with a bearer token
# (--web-config-file; the Secret the component expects is generated here:
# CA, certificate for "trainscope-agent", token) and Prometheus scrapes
# with the ServiceMonitor's tlsConfig and authorization; without the token
# the agent must answer 401, with it 200.
# Everything runs on 127.0.0.1 in a temp dir, removed on every exit path.
#
#   bash tests/deploy/e2e_operator.sh --agent build/agent/trainscope-agent \
#        --cli build/agent/cli/trainscope [--components podmonitor]
source "$(dirname "$0")/lib.sh"

agent=$REPO_ROOT/build/agent/trainscope-agent
cli=$REPO_ROOT/build/agent/cli/trainscope
components=
deadline=150
while [ $# -gt 0 ]; do
  case "$1" in
    --agent) agent=$2; shift 2 ;;
    --cli) cli=$2; shift 2 ;;
    --components) components=$2; shift 2 ;;
    --deadline) deadline=$2; shift 2 ;;
    *) echo "usage: $0 [--agent BIN] [--cli BIN] [--components LIST] [--deadline SECONDS]" >&2; exit 2 ;;
  esac
done
need prometheus "install Debian's prometheus package (bash scripts/install-deps.sh)"
need_kubectl
need_node
for b in "$agent" "$cli"; do
  [ -x "$b" ] || { echo "FAIL: $b is not built (cmake --build build --target trainscope-agent trainscope)" >&2; exit 1; }
done

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
tmp=$(mktemp -d /tmp/trainscope-e2e-operator.XXXXXX)
pids=()
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ $rc -ne 0 ]; then
    for f in "$tmp"/*.log; do echo "--- $(basename "$f") (tail)"; tail -15 "$f"; done 2>/dev/null || true
  fi
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fixture=$REPO_ROOT/tests/fixtures/hosts/v2-systemd
worker_cgroup=sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5d327134_2adb_42df_9641_afa0559997d7.slice

# node-b runs the next replicas of the same job (other pod names, same
# cgroups), so the two agents' pod series do not collide.
prepare_host() {  # prepare_host NODE SUFFIX_FROM SUFFIX_TO
  cp -a "$fixture" "$tmp/$1"
  python3 - "$tmp/$1/pods.json" "$1" <<'PY'
import json, sys
path, node = sys.argv[1], sys.argv[2]
pods = json.load(open(path))
for p in pods["items"]:
    p["spec"]["nodeName"] = node
    if node != "node-a":
        m = p["metadata"]
        m["name"] = m["name"].replace("-0", "-1").replace("nginx-", "nginx-b-")
        if "training.kubeflow.org/replica-index" in m.get("labels", {}):
            m["labels"]["training.kubeflow.org/replica-index"] = "1"
json.dump(pods, open(path, "w"))
PY
}
web_args=()
secret_dir=$tmp/secrets
if [[ ",$components," == *,web-config,* ]]; then
  need openssl "install openssl"
  need curl "install curl (bash scripts/install-deps.sh)"
  sec=$secret_dir/trainscope-web-config   # the Secret of components/web-config
  mkdir -p "$sec"
  (
    cd "$sec"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=trainscope-e2e-ca -keyout ca.key -out ca.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=trainscope-agent -keyout tls.key -out tls.csr 2>/dev/null
    printf 'subjectAltName=DNS:trainscope-agent\n' > san.ext
    openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out tls.crt 2>/dev/null
    od -An -N24 -tx1 /dev/urandom | tr -d ' \n' > token
    printf 'tls_server_config: {cert_file: tls.crt, key_file: tls.key}\nauthorization: {type: Bearer, credentials_file: token}\n' > web-config.yml
  ) || { echo "FAIL: cannot generate the test certificate" >&2; exit 1; }
  web_args=(--web-config-file "$sec/web-config.yml")
fi

start_agent() {  # start_agent NODE PORT
  "$agent" "${web_args[@]}" --listen "127.0.0.1:$2" --interval 0.5 --node-name "$1" \
    --discovery file --pod-file "$tmp/$1/pods.json" \
    --host-proc "$tmp/$1/proc" --host-sys "$tmp/$1/sys" \
    --cgroup-root "$tmp/$1/sys/fs/cgroup" --flows off > "$tmp/agent-$1.log" 2>&1 &
  pids+=($!)
}

prepare_host node-a
prepare_host node-b
# ctr-worker-0 (node-a): 100 CFS periods/s, 40 of them throttled, its tasks
# waiting for CPU 20% of the time (PSI some, which counts throttled time: the
# stall the diagnosis costs); bounded by the test's deadline.
(
  stat=$tmp/node-a/$worker_cgroup/cpu.stat
  pressure=$tmp/node-a/$worker_cgroup/cpu.pressure
  for ((i = 1; i <= (deadline + 120) * 5; i++)); do
    printf 'usage_usec %d\nuser_usec 30282476\nsystem_usec 12978204\nnr_periods %d\nnr_throttled %d\nthrottled_usec %d\n' \
      $((43260680 + i * 100000)) $((1000 + i * 20)) $((i * 8)) $((i * 40000)) > "$stat.tmp"
    printf 'some avg10=20.00 avg60=20.00 avg300=20.00 total=%d\nfull avg10=10.00 avg60=10.00 avg300=10.00 total=%d\n' \
      $((25018 + i * 40000)) $((12518 + i * 20000)) > "$pressure.tmp"
    mv "$stat.tmp" "$stat"
    mv "$pressure.tmp" "$pressure"
    sleep 0.2
  done
) &
pids+=($!)

port_a=$(free_port)
port_b=$(free_port)
start_agent node-a "$port_a"
start_agent node-b "$port_b"

# The agent's own authentication, before Prometheus relies on it.
if [ ${#web_args[@]} -gt 0 ]; then
  https_code() {  # https_code PORT PATH [curl args...]
    local port=$1 path=$2; shift 2
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$sec/ca.crt" \
      --resolve "trainscope-agent:$port:127.0.0.1" "$@" "https://trainscope-agent:$port$path" || true
  }
  for ((i = 0; i < 50; i++)); do
    [ "$(https_code "$port_a" /healthz)" = 200 ] && break
    sleep 0.2
  done
  check_code() {  # check_code WANT WHAT CODE
    if [ "$3" = "$1" ]; then echo "e2e-operator ok   $2: $3"; else echo "e2e-operator FAIL $2: $3, want $1" >&2; exit 1; fi
  }
  check_code 200 "https /healthz without credentials (the kubelet's probe)" "$(https_code "$port_a" /healthz)"
  check_code 401 "https /metrics without a token" "$(https_code "$port_a" /metrics)"
  check_code 401 "https /metrics with a wrong token" "$(https_code "$port_a" /metrics -H 'Authorization: Bearer wrong')"
  check_code 200 "https /metrics with the Secret's token" \
    "$(https_code "$port_a" /metrics -H "Authorization: Bearer $(cat "$sec/token")")"
  plain=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port_a/metrics" || true)
  [ "$plain" != 200 ] || { echo "e2e-operator FAIL plain http served /metrics" >&2; exit 1; }
  echo "e2e-operator ok   plain http to the TLS port gets no answer ($plain)"
fi

prom_port=$(free_port)
gen_args=(--node "node-a=127.0.0.1:$port_a" --node "node-b=127.0.0.1:$port_b" --interval 1s
  --config-out "$tmp/prometheus.yml" --rules-out "$tmp/trainscope-rules.yaml")
if [ -n "$components" ]; then gen_args+=(--components "$components" --secret-dir "$secret_dir"); fi
node "$DEPLOY_DIR/operator_config.mjs" "${gen_args[@]}"
promtool check config "$tmp/prometheus.yml" > "$tmp/promtool.log" 2>&1 || { cat "$tmp/promtool.log"; exit 1; }
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn > "$tmp/prometheus.log" 2>&1 &
pids+=($!)
echo "e2e-operator: agents on :$port_a (node-a) and :$port_b (node-b), prometheus on :$prom_port"

node "$DEPLOY_DIR/e2e_operator_check.mjs" --prometheus "http://127.0.0.1:$prom_port" \
  --cli "$cli" --deadline "$deadline"
