#!/usr/bin/env bash
# Quick start (1): install what is missing, build, and run the agent against
# this machine, finding pods from kubelet cgroups (there is no Kubernetes API
# here). Shows what it serves, then keeps running until Ctrl-C.
# TRAINSCOPE_DEMO_SECONDS=N stops it after N seconds instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh trainscope-agent
build_dir=${TRAINSCOPE_BUILD_DIR:-build}
port=${TRAINSCOPE_DEMO_PORT:-9476}

"$build_dir/agent/trainscope-agent" --listen "127.0.0.1:$port" --interval 2 \
  --discovery cgroup &
agent=$!
trap 'kill -TERM $agent 2>/dev/null; wait $agent 2>/dev/null' EXIT INT TERM
for _ in $(seq 50); do
  curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
echo
echo "== trainscope-agent is serving on http://127.0.0.1:$port"
echo "   metrics: http://127.0.0.1:$port/metrics"
echo "   pods:    http://127.0.0.1:$port/api/v1/pods"
echo "   report:  http://127.0.0.1:$port/api/v1/report?format=text"
echo
echo "== collectors and node (from /metrics)"
curl -fs "http://127.0.0.1:$port/metrics" |
  grep -E '^trainscope_(collector_up|node_cpu_count|node_memory|node_network_receive_bytes|sampler_cycles)' || true
echo
curl -fs "http://127.0.0.1:$port/api/v1/report?format=text"
echo
if [ -n "${TRAINSCOPE_DEMO_SECONDS:-}" ]; then
  sleep "$TRAINSCOPE_DEMO_SECONDS"
else
  echo "(Ctrl-C to stop)"
  wait $agent
fi
