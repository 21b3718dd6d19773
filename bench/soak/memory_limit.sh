#!/usr/bin/env bash
# Memory soak: the agent under its DaemonSet memory limit for an hour with
# the diagnosis history full and continuous scraping. A trainsim node with
# N pods (bench/macro's fixture: jobs of 10 pods, light traffic) runs the
# agent inside a memory cgroup of its own whose limit is the one in
# daemonset/base/daemonset.yaml; /metrics and /api/v1/report are fetched
# every second and RSS, the cgroup's usage and its OOM counters sampled every
# 30 s. Exit 0 when the agent lived to the end with no OOM and no failed
# scrape. Writes bench/results/<date>-soak-memory.json.
#
#   sudo bench/soak/memory_limit.sh [--seconds 3600] [--pods 110]
#        [--agent BIN] [--trainsim BIN] [--out FILE] [--note TEXT]
#        [--agent-env NAME=VALUE]...   (e.g. MALLOC_ARENA_MAX=2)
#
# cgroup v2 (memory.max / memory.current / memory.events) or, on a hybrid
# host whose memory controller is v1, memory.limit_in_bytes / usage_in_bytes
# / oom_control. Cleans up the node and the cgroup on any exit.
set -euo pipefail
cd "$(dirname "$0")/../.."

AGENT=build/agent/trainscope-agent
TRAINSIM=build/bench/trainsim/trainsim
SECONDS_TOTAL=3600
PODS=110
OUT=""
NOTE=""
AGENT_ENV=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_TOTAL=$2; shift 2 ;;
    --pods) PODS=$2; shift 2 ;;
    --agent) AGENT=$2; shift 2 ;;
    --trainsim) TRAINSIM=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --note) NOTE=$2; shift 2 ;;
    --agent-env) AGENT_ENV+=("$2"); shift 2 ;;
    *) echo "bench/soak: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench/soak: needs root" >&2; exit 1; }
for b in "$AGENT" "$TRAINSIM"; do
  [ -x "$b" ] || { echo "bench/soak: no executable $b (build it first)" >&2; exit 1; }
done
AGENT=$(realpath "$AGENT")

# The limit the DaemonSet gives the agent container (resources.limits.memory).
LIMIT=$(python3 - daemonset/base/daemonset.yaml <<'EOF'
import re, sys
units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 10**3, "M": 10**6,
         "G": 10**9, "": 1}
in_limits = False
for line in open(sys.argv[1]):
    s = line.strip()
    if s.startswith("limits:"):
        in_limits = True
    elif in_limits and s.startswith("memory:"):
        m = re.fullmatch(r"memory:\s*([0-9.]+)([KMG]i?)?", s)
        print(int(float(m.group(1)) * units[m.group(2) or ""]))
        sys.exit(0)
    elif in_limits and not s.startswith(("cpu:", "#")):
        in_limits = False
sys.exit("no resources.limits.memory in " + sys.argv[1])
EOF
)

# The agent's own memory cgroup.
NAME=trainscope-soak-$$
if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  V2=1; CG=/sys/fs/cgroup/$NAME
  echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
  mkdir "$CG"; echo "$LIMIT" >"$CG/memory.max"; echo 0 >"$CG/memory.swap.max" 2>/dev/null || true
else
  V2=0; CG=/sys/fs/cgroup/memory/$NAME
  mkdir "$CG"; echo "$LIMIT" >"$CG/memory.limit_in_bytes"
  # No swap either, as in a container with a memory limit.
  echo "$LIMIT" >"$CG/memory.memsw.limit_in_bytes" 2>/dev/null || true
fi

WORK=$(mktemp -d /tmp/trainscope-soak-memory.XXXXXX)
RUN_ID=""; SUP=""; SAMPLER=""
cleanup() {
  set +e
  [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null && wait "$SAMPLER" 2>/dev/null
  if [ -n "$RUN_ID" ]; then
    "$TRAINSIM" down --run-id "$RUN_ID" >/dev/null 2>&1
    if [ -n "$SUP" ] && kill -0 "$SUP" 2>/dev/null; then
      kill "$SUP"
      for _ in $(seq 100); do kill -0 "$SUP" 2>/dev/null || break; sleep 0.2; done
    fi
    "$TRAINSIM" cleanup --run-id "$RUN_ID" >/dev/null 2>&1
  fi
  for pid in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  for _ in $(seq 50); do rmdir "$CG" 2>/dev/null && break; sleep 0.2; done
  [ -n "${KEEP:-}" ] && echo "bench/soak: kept $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ENV_WORDS=""
[ ${#AGENT_ENV[@]} -eq 0 ] || ENV_WORDS=$(printf ' %q' "${AGENT_ENV[@]}")
# trainsim starts the agent; this wrapper moves it into the cgroup first, so
# every page it ever allocates is charged there.
cat >"$WORK/agent" <<EOF
#!/bin/sh
[ "\$1" = --help ] || echo \$\$ >"$CG/cgroup.procs"
exec env$ENV_WORDS "$AGENT" "\$@"
EOF
chmod +x "$WORK/agent"

python3 bench/macro/scenario.py "$PODS" >"$WORK/scenario.json"
INTERVAL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["interval_s"])' "$WORK/scenario.json")
HISTORY=$("$AGENT" --help | sed -n 's/.*--history INT:INT in \[[0-9 -]*\]=\([0-9]*\).*/\1/p')
RUN_ID=$(printf '%08x' $((RANDOM * 32768 + RANDOM)))
STARTED=$(date +%s.%N)
echo "bench/soak: $PODS pods, limit $LIMIT bytes (v2=$V2, $CG), interval ${INTERVAL}s," \
  "history $HISTORY, ${SECONDS_TOTAL}s (run $RUN_ID)" >&2
"$TRAINSIM" up --scenario "$WORK/scenario.json" --agent "$WORK/agent" \
  --run-id "$RUN_ID" >"$WORK/up.log" 2>&1 || { cat "$WORK/up.log" >&2; exit 1; }
SUP=$(cat "/run/trainsim/$RUN_ID/supervisor.pid")
URL=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$WORK/up.log" | head -1); URL=${URL%/metrics}
AGENT_PID=""
for _ in $(seq 50); do
  AGENT_PID=$(head -1 "$CG/cgroup.procs")
  [ -n "$AGENT_PID" ] && break
  sleep 0.2
done
[ -n "$AGENT_PID" ] || { echo "bench/soak: no agent in $CG" >&2; exit 1; }
echo "bench/soak: agent pid $AGENT_PID at $URL" >&2

[ -n "$OUT" ] || OUT=bench/results/$(date -u +%Y-%m-%d)-soak-memory.json
META=$(python3 -c '
import json, os, platform, sys, time
a = sys.argv[1:]
print(json.dumps({
  "date": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
  "machine": {"hostname": platform.node(), "cpus": os.cpu_count(),
              "kernel": platform.release()},
  "note": a[0],
  "method": {"pods": int(a[1]), "limit_bytes": int(a[2]),
             "limit_from": "daemonset/base/daemonset.yaml resources.limits.memory",
             "cgroup": "v2 memory.max" if a[3] == "1" else "v1 memory.limit_in_bytes",
             "agent_interval_s": float(a[4]), "history": int(a[5]),
             "scrape": "/metrics and /api/v1/report every 1 s",
             "sample_interval_s": 30, "seconds": float(a[6]),
             "fixture": "bench/macro/scenario.py via trainsim up",
             "agent_env": a[7:]}}))' \
  "$NOTE" "$PODS" "$LIMIT" "$V2" "$INTERVAL" "$HISTORY" "$SECONDS_TOTAL" \
  ${AGENT_ENV[@]+"${AGENT_ENV[@]}"})
set +e
python3 bench/soak/memory_sample.py --pid "$AGENT_PID" --url "$URL" --cgroup "$CG" \
  --v2 "$V2" --limit "$LIMIT" --interval "$INTERVAL" --history "$HISTORY" \
  --seconds "$SECONDS_TOTAL" --started "$STARTED" --meta "$META" --out "$OUT" &
SAMPLER=$!
wait "$SAMPLER"; RC=$?
SAMPLER=""
set -e
echo "bench/soak: wrote $OUT" >&2
exit "$RC"
