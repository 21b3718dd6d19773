#!/usr/bin/env bash
# Macro benchmark: the agent on a trainsim node with N pods, side by side
# with Debian's prometheus-node-exporter on a loopback port, both scraped at
# the agent's default interval. Prints a table with pass/miss per target and
# writes bench/results/<date>-<machine>.json.
#
#   sudo bench/macro/run.sh [--agent BIN] [--trainsim BIN] [--micro BIN]
#        [--pods "10 50 110"] [--seconds 60] [--warmup 15] [--burst 100]
#        [--scrape-interval 5] [--flows-rounds 0] [--out FILE] [--note TEXT]
#        [--variants all|default,no-flows,...] [--runs 3]
#
# Each variant (bench/macro/variants.py: every default feature on, then each
# feature switched off in turn) runs --runs times at every N, each run its
# own trainsim up, warm-up, measurement and down; the variants alternate
# within a round so that drift in the machine's load spreads over all of
# them. The report gives medians over the runs.
#
# Needs root (trainsim builds network namespaces and cgroups). Installs
# prometheus-node-exporter with apt-get when it is missing (benchmark-only
# dependency). --flows-rounds R > 0 also runs bench/flows/run.sh for the
# eBPF throughput target. Cleans up on any exit.
set -euo pipefail
cd "$(dirname "$0")/../.."

AGENT=build/agent/trainscope-agent
TRAINSIM=build/bench/trainsim/trainsim
MICRO=build/bench/micro/trainscope_micro_bench
PODS="10 50 110"
SECONDS_PER_N=60
WARMUP=15
BURST=100
SCRAPE_INTERVAL=5
FLOWS_ROUNDS=0
OUT=""
NOTE=""
VARIANTS=all
RUNS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --agent) AGENT=$2; shift 2 ;;
    --trainsim) TRAINSIM=$2; shift 2 ;;
    --micro) MICRO=$2; shift 2 ;;
    --pods) PODS=$2; shift 2 ;;
    --seconds) SECONDS_PER_N=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --burst) BURST=$2; shift 2 ;;
    --scrape-interval) SCRAPE_INTERVAL=$2; shift 2 ;;
    --flows-rounds) FLOWS_ROUNDS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --note) NOTE=$2; shift 2 ;;
    --variants) VARIANTS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    *) echo "bench/macro: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench/macro: needs root" >&2; exit 1; }
for b in "$AGENT" "$TRAINSIM"; do
  [ -x "$b" ] || { echo "bench/macro: no executable $b (build it first)" >&2; exit 1; }
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "bench/macro: --runs needs a count >= 1" >&2; exit 2; }
[ "$VARIANTS" = all ] && VARIANTS=$(python3 bench/macro/variants.py names | tr ' ' ,)
python3 bench/macro/variants.py check "$AGENT" "$VARIANTS" || exit 2
# Variants with nothing to switch off yet are reported, not run.
RUN_VARIANTS=()
for v in ${VARIANTS//,/ }; do
  if python3 bench/macro/variants.py runnable "$v"; then RUN_VARIANTS+=("$v")
  else echo "bench/macro: variant $v is not built in the agent; reported as n/a" >&2
  fi
done
[ ${#RUN_VARIANTS[@]} -gt 0 ] || { echo "bench/macro: no variant to run" >&2; exit 2; }
NE=/usr/bin/prometheus-node-exporter
if [ ! -x "$NE" ]; then
  echo "bench/macro: installing prometheus-node-exporter (benchmark only)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    prometheus-node-exporter >/dev/null
fi

WORK=$(mktemp -d /tmp/trainscope-bench-macro.XXXXXX)
NE_PID=""
RUN_ID=""
# `trainsim down`, then make sure the supervisor (and with it the agent) is
# gone: a node left running would load the next point and add its veths to
# node_exporter's series.
SUP=""
stop_node() {
  "$TRAINSIM" down --run-id "$RUN_ID" >/dev/null 2>&1 || true
  if [ -n "$SUP" ] && kill -0 "$SUP" 2>/dev/null; then
    kill "$SUP" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$SUP" 2>/dev/null || break; sleep 0.2; done
    "$TRAINSIM" cleanup --run-id "$RUN_ID" >/dev/null 2>&1 || true
  fi
  RUN_ID=""; SUP=""
}
cleanup() {
  set +e
  [ -n "$RUN_ID" ] && stop_node
  [ -n "$NE_PID" ] && kill "$NE_PID" 2>/dev/null && wait "$NE_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# node_exporter for the whole run: default collectors, loopback only.
NE_PORT=$(free_port)
"$NE" --web.listen-address="127.0.0.1:$NE_PORT" >"$WORK/node_exporter.log" 2>&1 &
NE_PID=$!
for _ in $(seq 50); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$NE_PORT/metrics')" 2>/dev/null && break
  sleep 0.2
done

# One point: N pods, one variant, one run. Appends N:variant:run=FILE to
# POINTS.
POINTS=()
measure_point() {
  local n=$1 variant=$2 run=$3 tag="$1-$2-$3" args=()
  local flag
  while read -r flag; do
    [ -n "$flag" ] && args+=("--agent-arg=$flag")
  done < <(python3 bench/macro/variants.py args "$variant")
  RUN_ID=$(printf '%08x' $((RANDOM * 32768 + RANDOM)))
  echo "== N=$n pods, $variant, run $run/$RUNS: trainsim up (run $RUN_ID)" >&2
  "$TRAINSIM" up --scenario "$WORK/scenario-$n.json" --agent "$AGENT" \
    "${args[@]}" --run-id "$RUN_ID" >"$WORK/up-$tag.log" 2>&1 \
    || { cat "$WORK/up-$tag.log" >&2; exit 1; }
  local agent_url agent_pid
  agent_url=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$WORK/up-$tag.log" | head -1)
  SUP=$(cat "/run/trainsim/$RUN_ID/supervisor.pid")
  agent_pid=$(pgrep -P "$SUP" -f "$(basename "$AGENT")" | head -1)
  [ -n "$agent_pid" ] || { echo "bench/macro: agent pid not found" >&2; exit 1; }
  echo "   agent pid $agent_pid at $agent_url${args[*]:+ ${args[*]}}; warm-up ${WARMUP}s, then ${SECONDS_PER_N}s" >&2
  sleep "$WARMUP"
  python3 bench/macro/measure.py --agent-pid "$agent_pid" --agent-url "$agent_url" \
    --ne-pid "$NE_PID" --ne-url "http://127.0.0.1:$NE_PORT/metrics" \
    --seconds "$SECONDS_PER_N" --scrape-interval "$SCRAPE_INTERVAL" \
    --burst "$BURST" >"$WORK/point-$tag.json"
  POINTS+=("$n:$variant:$run=$WORK/point-$tag.json")
  stop_node
}

for n in $PODS; do
  python3 bench/macro/scenario.py "$n" >"$WORK/scenario-$n.json"
  for run in $(seq "$RUNS"); do
    for variant in "${RUN_VARIANTS[@]}"; do
      measure_point "$n" "$variant" "$run"
    done
  done
done

# Render at 10k series from the micro benchmark (BM_RenderMetrics/160).
RENDER_JSON=""
if [ -x "$MICRO" ]; then
  "$MICRO" --benchmark_filter='BM_RenderMetrics/160$' --benchmark_repetitions=5 \
    --benchmark_format=json >"$WORK/render.json" 2>/dev/null && RENDER_JSON=$WORK/render.json
fi
FLOWS_LOG=""
if [ "$FLOWS_ROUNDS" -gt 0 ]; then
  bench/flows/run.sh --agent "$AGENT" --rounds "$FLOWS_ROUNDS" >"$WORK/flows.log" 2>&1 \
    && FLOWS_LOG=$WORK/flows.log
fi

[ -n "$OUT" ] || OUT=bench/results/$(date -u +%Y-%m-%d)-$(hostname -s).json
python3 bench/macro/report.py --out "$OUT" --render "$RENDER_JSON" \
  --flows "$FLOWS_LOG" --seconds "$SECONDS_PER_N" --scrape-interval "$SCRAPE_INTERVAL" \
  --agent "$AGENT" --note "$NOTE" --variants "$VARIANTS" --runs "$RUNS" \
  "${POINTS[@]}"
