#!/usr/bin/env bash
# HTTP starvation bench (issue 15; results in docs/reliability.md).
#
#   bench/http/run.sh [AGENT_BINARY] [OUT_DIR]
#
# Starts the agent on the v2-systemd fixture host (--discovery file,
# --flows off), then for 0, 4, 16, 64 and 1000 idle connections held open
# (bench/http/starve.py) times 200 GETs of /metrics and of /healthz on fresh
# connections (p50/p99/max), and runs wrk with 100 keep-alive connections
# against each. Writes OUT_DIR/http-bench.json and prints a Markdown table.
# IDLE="0 4 16", REQUESTS=200, WRK_SECONDS=10, STARVE_ARGS="--timeout 30"
# and AGENT_ARGS (extra agent flags) override the defaults.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
agent=${1:-$root/build/agent/trainscope-agent}
out=${2:-$(mktemp -d /tmp/trainscope-http-bench.XXXXXX)}
idle_counts=${IDLE:-"0 4 16 64 1000"}
wrk_seconds=${WRK_SECONDS:-10}
requests=${REQUESTS:-200}
host=$root/tests/fixtures/hosts/v2-systemd
mkdir -p "$out"

[ -x "$agent" ] || { echo "run.sh: no agent binary at $agent" >&2; exit 2; }
command -v wrk >/dev/null || { echo "run.sh: wrk missing (apt-get install wrk)" >&2; exit 2; }
# Both ends hold one descriptor per connection.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || ulimit -n 8192

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$agent" --listen "127.0.0.1:$port" --interval 1 --node-name node-a --discovery file \
  --pod-file "$host/pods.json" --host-proc "$host/proc" --host-sys "$host/sys" \
  --cgroup-root "$host/sys/fs/cgroup" --flows off --log-level warn \
  ${AGENT_ARGS:-} 2>"$out/agent.log" &
agent_pid=$!
trap 'kill $agent_pid 2>/dev/null; wait $agent_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$port/readyz" >/dev/null && break
  sleep 0.1
done
curl -fs "http://127.0.0.1:$port/readyz" >/dev/null || {
  echo "run.sh: agent not ready; log:" >&2; cat "$out/agent.log" >&2; exit 1; }

results=()
for n in $idle_counts; do
  echo "run.sh: $n idle connections" >&2
  results+=("$(python3 "$here/starve.py" --port "$port" --idle "$n" --requests "$requests" ${STARVE_ARGS:-})")
done

# wrk: 100 concurrent keep-alive scrapers, no idle clients.
wrk_json() {
  local path=$1
  wrk -t2 -c100 -d"${wrk_seconds}s" --latency --timeout 10s \
    "http://127.0.0.1:$port$path" >"$out/wrk$(echo "$path" | tr / _).txt"
  python3 - "$out/wrk$(echo "$path" | tr / _).txt" "$path" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read()
def ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v)
    return round(float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)], 2)
lat = dict(re.findall(r"^\s+(50|90|99)%\s+(\S+)", text, re.M))
reqs = re.search(r"(\d+) requests in", text).group(1)
rps = re.search(r"Requests/sec:\s+([\d.]+)", text).group(1)
err = re.search(r"Socket errors: (.*)", text)
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print(json.dumps({"path": sys.argv[2], "requests": int(reqs), "rps": float(rps),
                  "p50_ms": ms(lat["50"]), "p99_ms": ms(lat["99"]),
                  "socket_errors": err.group(1) if err else "none",
                  "non_2xx": int(non2xx.group(1)) if non2xx else 0}))
EOF
}
wrk_metrics=$(wrk_json /metrics)
wrk_healthz=$(wrk_json /healthz)

python3 - "$out/http-bench.json" "$agent" "${results[@]}" <<EOF
import json, sys, datetime
path, agent, rows = sys.argv[1], sys.argv[2], [json.loads(r) for r in sys.argv[3:]]
doc = {"date": datetime.date.today().isoformat(), "agent": agent,
       "idle": rows, "wrk": [json.loads('''$wrk_metrics'''), json.loads('''$wrk_healthz''')]}
json.dump(doc, open(path, "w"), indent=1)
print("| idle connections held | /metrics p50 / p99 / max (ms) | /healthz p50 / p99 / max (ms) | errors | server drops |")
print("|---|---|---|---|---|")
for r in rows:
    m, h = r["metrics"], r["healthz"]
    f = lambda s: "%s / %s / %s" % (s.get("p50_ms"), s.get("p99_ms"), s.get("max_ms"))
    print("| %d | %s | %s | %d | %d |" % (r["idle"], f(m), f(h), m["errors"] + h["errors"], r["reconnects"]))
print()
print("| wrk, 100 connections | requests | req/s | p50 (ms) | p99 (ms) | socket errors | non-2xx |")
print("|---|---|---|---|---|---|---|")
for w in doc["wrk"]:
    print("| %s | %d | %.0f | %s | %s | %s | %d |" % (w["path"], w["requests"], w["rps"], w["p50_ms"], w["p99_ms"], w["socket_errors"], w["non_2xx"]))
EOF
echo "run.sh: results in $out/http-bench.json" >&2
