#!/usr/bin/env bash
# Quick start (1): install what is missing, build, and run the hot-parameter-
# server demo end to end: trainsim turns this machine into a simulated
# training node (pods as network namespaces and kubelet-style cgroups, TF-like
# receiver-pull traffic, a Kubernetes API for the pods), starts the real
# trainscope-agent against it, prints the /metrics URL, and at the end the
# bottleneck report and the traffic each pod really exchanged. Everything is
# torn down afterwards (also on Ctrl-C).
#   TRAINSCOPE_DEMO_SCENARIO=bench/scenarios/<name>.json  another scenario
#   TRAINSCOPE_DEMO_SECONDS=N                             run N seconds
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh trainscope-agent trainscope trainsim fake_nvml
build_dir=${TRAINSCOPE_BUILD_DIR:-build}
scenario=${TRAINSCOPE_DEMO_SCENARIO:-bench/scenarios/hot-ps-embedding.json}
exec "$build_dir/bench/trainsim/trainsim" run --scenario "$scenario" \
  --agent "$build_dir/agent/trainscope-agent" \
  --duration "${TRAINSCOPE_DEMO_SECONDS:-60}"
