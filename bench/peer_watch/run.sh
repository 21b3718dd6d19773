#!/usr/bin/env bash
# What the default cross-node peer naming costs the agent: its RSS and CPU
# with the peer-pod watch off, and on against a cluster of N training pods
# (500 nodes, 20,000 by default) served by fake_api.py on loopback, with a
# steady trickle of watch events. Prints a table (docs/performance.md).
#
#   bench/peer_watch/run.sh [--agent BIN] [--remote "0 5000 20000"]
#        [--seconds 60] [--events-per-second 3]
set -euo pipefail
cd "$(dirname "$0")/../.."
AGENT=build/agent/trainscope-agent
REMOTE="0 5000 20000"
SECONDS_RUN=60
EVENTS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --agent) AGENT=$2; shift 2 ;;
    --remote) REMOTE=$2; shift 2 ;;
    --seconds) SECONDS_RUN=$2; shift 2 ;;
    --events-per-second) EVENTS=$2; shift 2 ;;
    *) echo "bench/peer_watch: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$AGENT" ] || { echo "bench/peer_watch: no executable $AGENT (build it first)" >&2; exit 1; }
HOST=tests/fixtures/hosts/v2-systemd
WORK=$(mktemp -d /tmp/trainscope-bench-peers.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_seconds() { awk -v t="$(getconf CLK_TCK)" '{print ($14+$15)/t}' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS/{print $2}' "/proc/$1/status"; }
hwm_kib() { awk '/^VmHWM/{print $2}' "/proc/$1/status"; }

printf '%-12s %-10s %-12s %-12s %-14s %-12s\n' "peer pods" "selector" "RSS MiB" "peak MiB" "CPU % core" "peer table"
for n in $REMOTE; do
  api_port=$(free_port)
  agent_port=$(free_port)
  python3 bench/peer_watch/fake_api.py --port "$api_port" --remote "$n" \
    --events-per-second "$EVENTS" --watch-seconds 600 >"$WORK/api-$n.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do grep -q "fake_api:" "$WORK/api-$n.log" 2>/dev/null && break; sleep 0.2; done
  selector=auto
  [ "$n" -eq 0 ] && selector=off
  "$AGENT" --listen "127.0.0.1:$agent_port" --node-name bench-node \
    --discovery apiserver --kube-api "http://127.0.0.1:$api_port" \
    --peer-pods-selector "$selector" --flows off --interval 5 \
    --host-proc "$HOST/proc" --host-sys "$HOST/sys" --cgroup-root "$HOST/sys/fs/cgroup" \
    --log-level warn >"$WORK/agent-$n.log" 2>&1 &
  agent=$!
  PIDS+=($agent)
  # Warm-up: the first (paged) list and a few cycles.
  for _ in $(seq 150); do
    curl -sf "http://127.0.0.1:$agent_port/metrics" 2>/dev/null | grep -q '^trainscope_discovery_peer_ready{mode="apiserver"} 1' && break
    [ "$n" -eq 0 ] && break
    sleep 0.2
  done
  sleep 15
  c0=$(cpu_seconds "$agent")
  end=$((SECONDS + SECONDS_RUN))
  while [ $SECONDS -lt $end ]; do
    curl -sf -o /dev/null "http://127.0.0.1:$agent_port/metrics" || true
    sleep 5
  done
  c1=$(cpu_seconds "$agent")
  peers=$(curl -sf "http://127.0.0.1:$agent_port/metrics" | awk '/^trainscope_discovery_peer_pods/{print $2}')
  printf '%-12s %-10s %-12.1f %-12.1f %-14.2f %-12s\n' "$n" "$selector" \
    "$(echo "$(rss_kib "$agent") / 1024" | bc -l)" "$(echo "$(hwm_kib "$agent") / 1024" | bc -l)" \
    "$(echo "($c1 - $c0) * 100 / $SECONDS_RUN" | bc -l)" "${peers:-0}"
  kill "$agent" 2>/dev/null || true
  kill "${PIDS[-2]}" 2>/dev/null || true
  wait "$agent" 2>/dev/null || true
done
