#!/usr/bin/env bash
# Quick start (1): install what is missing, build, and run the hot-parameter-
# server demo end to end: trainsim turns this machine into a simulated
# training node (pods as network namespaces and kubelet-style cgroups, TF-like
# receiver-pull traffic, a Kubernetes API for the pods), starts the real
# trainscope-agent against it, prints the /metrics URL, and at the end the
# bottleneck report and the traffic each pod really exchanged, and writes the
# report page (one HTML file, open it in a browser). Everything is torn down
# afterwards (also on Ctrl-C).
#   TRAINSCOPE_DEMO_SCENARIO=bench/scenarios/<name>.json  another scenario
#   TRAINSCOPE_DEMO_SECONDS=N                             run N seconds
#   TRAINSCOPE_DEMO_PAGE=FILE                             where the page goes
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh trainscope-agent trainscope trainsim fake_nvml
build_dir=${TRAINSCOPE_BUILD_DIR:-build}
scenario=${TRAINSCOPE_DEMO_SCENARIO:-bench/scenarios/hot-ps-embedding.json}
seconds=${TRAINSCOPE_DEMO_SECONDS:-60}
page=${TRAINSCOPE_DEMO_PAGE:-$build_dir/trainscope-report.html}
rm -f "$page"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# While the pods run, keep the report page of the agent's latest report:
# `trainscope report --agent URL --html FILE` replaces the file atomically,
# so the last page written before the run ends is the one left.
(
  start=$(date +%s)
  while [ $(($(date +%s) - start)) -lt "$seconds" ]; do
    sleep 5
    "$build_dir/agent/cli/trainscope" report --agent "http://127.0.0.1:$port" \
      --html "$page" >/dev/null 2>&1 || true
  done
) &
poller=$!
status=0
"$build_dir/bench/trainsim/trainsim" run --scenario "$scenario" \
  --agent "$build_dir/agent/trainscope-agent" --agent-port "$port" \
  --duration "$seconds" || status=$?
kill "$poller" 2>/dev/null || true
wait "$poller" 2>/dev/null || true
if [ -s "$page" ]; then
  echo
  echo "Report page (open it in a browser): file://$(realpath "$page")"
else
  echo "No report page written: the agent did not answer on port $port." >&2
fi
exit "$status"
