#!/usr/bin/env bash
# End to end: a real Prometheus (127.0.0.1, config and data in a temp dir),
# configured as the Prometheus Operator configures it for the shipped
# ServiceMonitor and PrometheusRule, scrapes a real trainscope-agent while
# trainsim runs the hot-PS scenario (tests/deploy/e2e-hot-ps.json). Passes
# when TrainscopeHotParameterServer for ctr-ps-0 reaches `firing` and every
# PromQL expression of every dashboard panel (variables substituted) returns
# at least one series. Prometheus and the trainsim run are stopped and
# removed on every exit path.
#
#   sudo bash tests/deploy/e2e_prometheus.sh --agent build/agent/trainscope-agent \
#        --trainsim build/bench/trainsim/trainsim [--deadline 600]
source "$(dirname "$0")/lib.sh"

agent=$REPO_ROOT/build/agent/trainscope-agent
trainsim=$REPO_ROOT/build/bench/trainsim/trainsim
deadline=600
while [ $# -gt 0 ]; do
  case "$1" in
    --agent) agent=$2; shift 2 ;;
    --trainsim) trainsim=$2; shift 2 ;;
    --deadline) deadline=$2; shift 2 ;;
    *) echo "usage: $0 [--agent BIN] [--trainsim BIN] [--deadline SECONDS]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "FAIL: needs root (trainsim builds netns and cgroups; the agent loads BPF)" >&2; exit 1; }
need prometheus "install Debian's prometheus package (bash scripts/install-deps.sh)"
need curl "install curl (bash scripts/install-deps.sh)"
need_node
for b in "$agent" "$trainsim"; do
  [ -x "$b" ] || { echo "FAIL: $b is not built (cmake --build build --target trainscope-agent trainsim)" >&2; exit 1; }
done
fake_nvml=$(dirname "$agent")/../fake_nvml/libnvidia-ml.so.1
[ -f "$fake_nvml" ] || { echo "FAIL: $fake_nvml is not built (target fake_nvml)" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
tmp=$(mktemp -d /tmp/trainscope-e2e.XXXXXX)
run_id=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
agent_port=$(free_port)
prom_port=$(free_port)
prom_pid=
cleanup() {
  local rc=$?
  if [ -n "$prom_pid" ]; then kill "$prom_pid" 2>/dev/null || true; wait "$prom_pid" 2>/dev/null || true; fi
  "$trainsim" down --run-id "$run_id" >/dev/null 2>&1 || "$trainsim" cleanup --run-id "$run_id" --force >/dev/null 2>&1 || true
  if [ $rc -ne 0 ]; then
    echo "--- prometheus log (tail)"; tail -20 "$tmp/prometheus.log" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "e2e: trainsim up (run $run_id, agent on 127.0.0.1:$agent_port)"
"$trainsim" up --scenario "$DEPLOY_DIR/e2e-hot-ps.json" --run-id "$run_id" \
  --agent "$agent" --agent-port "$agent_port" \
  --agent-arg=--nvml-library="$(realpath "$fake_nvml")" > "$tmp/trainsim-up.log"

# The scrape job the Prometheus Operator generates for the shipped
# ServiceMonitor (job, honor_labels, relabelings; operator_config.mjs), and
# the PrometheusRule's groups as the rule file, with `for` cut to 1m (the
# hot-PS alert's 5m would only add 4 minutes of waiting; promtool's tests
# hold the shipped durations).
need_kubectl
node "$DEPLOY_DIR/operator_config.mjs" --node "trainsim-$run_id=127.0.0.1:$agent_port" \
  --interval 5s --config-out "$tmp/prometheus.yml" --rules-out "$tmp/trainscope-rules.yaml" \
  --max-for 1m
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn > "$tmp/prometheus.log" 2>&1 &
prom_pid=$!
echo "e2e: prometheus on 127.0.0.1:$prom_port (pid $prom_pid)"

node "$DEPLOY_DIR/e2e_check.mjs" --prometheus "http://127.0.0.1:$prom_port" \
  --node "trainsim-$run_id" --deadline "$deadline"
