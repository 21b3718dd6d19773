#!/usr/bin/env bash
# Cluster-view benchmark: a real Prometheus holding a synthetic cluster
# (bench/cluster_view/generate.py), and `trainscope report --prometheus` over
# the whole cluster and over its largest job, timed under /usr/bin/time -v.
# A loopback proxy (proxy.py) counts the queries and the bytes they answer.
# Prints a table and writes the raw numbers as JSON (--out).
#
#   bench/cluster_view/run.sh [--nodes 500] [--pods-per-node 110]
#        [--minutes 30] [--shards N] [--tsdb DIR] [--trainscope BIN]
#        [--range 600] [--step 15] [--memory-limit-mib 8192]
#        [--max-samples 50000000] [--import-only] [--check] [--out FILE]
#        [--batch-series N] [--compare-unbatched] [--compare-exhaustive]
#        [--faults] [--note TEXT]
#
# --shards N imports the cluster in N parts (by node), each generated to a
#   file, imported with `promtool tsdb create-blocks-from openmetrics` and
#   deleted: the text of 500 nodes is ~65 GB. Default: one per 50 nodes.
# --tsdb DIR keeps the imported TSDB in DIR, and reuses it when DIR already
#   holds blocks (then nothing is generated; give the same --nodes/--minutes).
#   Without it everything lives in a temporary folder removed on exit.
#   The import's figures are kept in DIR/trainscope-import.json.
# --import-only stops after the import (with --tsdb: prepare a big run).
# --batch-series N passes N to the whole-cluster report (default: the CLI's
#   own, 50,000 series per batch).
# --compare-unbatched also runs the whole cluster in one window
#   (--batch-series 0) and, with --check, requires the same diagnoses and PS
#   shares from both (the batching must not change the answer).
#   It also runs the whole cluster in batches without the triage
#   (--triage off): with --check, the triaged report (the default on a
#   cluster of several batches) must give the same diagnoses, and the PS
#   shares within 0.05.
# --compare-exhaustive runs only the batches without the triage and, with
#   --check, compares the triaged report with them (a 500-node cluster in
#   one window does not fit in memory).
# --faults has the generator add a straggler, a full node NIC and a
#   throttled pod (generate.py); with --check every report must name them.
# The recording rules the triage reads (dashboards/alerts.yaml) are
#   backfilled after the import (backfill_rules.py, two passes: the second
#   reads the first's records), as Prometheus would have recorded them.
# --check exits 1 unless both reports ran and the whole-cluster one names the
#   generated hot PS (the ctest smoke); 77 when prometheus/promtool are missing.
# --memory-limit-mib caps the CLI's address space so a run that would eat
#   the machine fails instead (recorded as such).
# Needs python3, prometheus, promtool (scripts/install-deps.sh) and the
# trainscope CLI (cmake --build build --target trainscope).
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=bench/cluster_view

NODES=500
PPN=110
MINUTES=30
SHARDS=""
TSDB=""
CLI=build/agent/cli/trainscope
RANGE=600
STEP=15
MEMLIMIT=8192
MAX_SAMPLES=50000000
OUT=""
NOTE=""
IMPORT_ONLY=0
CHECK=""
BATCH=()
COMPARE=0
FAULTS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) NODES=$2; shift 2 ;;
    --pods-per-node) PPN=$2; shift 2 ;;
    --minutes) MINUTES=$2; shift 2 ;;
    --shards) SHARDS=$2; shift 2 ;;
    --tsdb) TSDB=$2; shift 2 ;;
    --trainscope) CLI=$2; shift 2 ;;
    --range) RANGE=$2; shift 2 ;;
    --step) STEP=$2; shift 2 ;;
    --memory-limit-mib) MEMLIMIT=$2; shift 2 ;;
    --max-samples) MAX_SAMPLES=$2; shift 2 ;;
    --import-only) IMPORT_ONLY=1; shift ;;
    --check) CHECK=--check; shift ;;
    --batch-series) BATCH=(--batch-series "$2"); shift 2 ;;
    --compare-unbatched) COMPARE=1; shift ;;
    --compare-exhaustive) COMPARE=2; shift ;;
    --faults) FAULTS=(--faults); shift ;;
    --out) OUT=$2; shift 2 ;;
    --note) NOTE=$2; shift 2 ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$SHARDS" ] || SHARDS=$(( (NODES + 49) / 50 ))
for tool in python3 prometheus promtool /usr/bin/time curl; do
  command -v "$tool" >/dev/null ||
    { echo "run.sh: $tool not found (scripts/install-deps.sh)" >&2;
      [ -n "$CHECK" ] && exit 77; exit 2; }
done
[ -x "$CLI" ] || [ "$IMPORT_ONLY" = 1 ] || { echo "run.sh: no CLI at $CLI (build the trainscope target or give --trainscope)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/trainscope-cluster-view.XXXXXX)
PROM_PID=""
PROXY_PID=""
cleanup() {
  [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null || true
  if [ -n "$PROM_PID" ]; then
    kill "$PROM_PID" 2>/dev/null || true
    wait "$PROM_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
[ -n "$TSDB" ] || TSDB=$WORK/tsdb
mkdir -p "$TSDB"

GEN=(python3 "$HERE/generate.py" --nodes "$NODES" --pods-per-node "$PPN"
     --minutes "$MINUTES" "${FAULTS[@]}")
# The samples' end time is fixed once and kept with the TSDB.
END=""
if [ -e "$TSDB/trainscope-import.json" ]; then
  END=$(python3 -c "import json; print(json.load(open('$TSDB/trainscope-import.json'))['end'])")
fi
[ -n "$END" ] && GEN+=(--end "$END")
"${GEN[@]}" --summary-only 2>"$WORK/summary.json" >/dev/null
END=$(python3 -c "import json; print(json.load(open('$WORK/summary.json'))['end'])")
GEN+=(--end "$END")
if [ -e "$TSDB/trainscope-import.json" ]; then
  echo "reusing the blocks in $TSDB" >&2
elif ls "$TSDB"/*/meta.json >/dev/null 2>&1; then
  echo "run.sh: $TSDB holds blocks of an unfinished import; remove it" >&2
  exit 2
else
  gen_s=0; imp_s=0; imp_rss=0; text=0
  for ((i = 0; i < SHARDS; i++)); do
    t0=$(date +%s.%N)
    "${GEN[@]}" --shard "$i/$SHARDS" --out "$WORK/part.om" 2>>"$WORK/gen.log"
    t1=$(date +%s.%N)
    text=$((text + $(stat -c %s "$WORK/part.om")))
    /usr/bin/time -v -o "$WORK/imp.time" promtool tsdb create-blocks-from \
      openmetrics "$WORK/part.om" "$TSDB" >"$WORK/imp.log" 2>&1 ||
      { cat "$WORK/imp.log" >&2; exit 1; }
    t2=$(date +%s.%N)
    rm -f "$WORK/part.om"
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$WORK/imp.time")
    gen_s=$(python3 -c "print($gen_s + $t1 - $t0)")
    imp_s=$(python3 -c "print($imp_s + $t2 - $t1)")
    imp_rss=$((rss > imp_rss ? rss : imp_rss))
    echo "part $((i + 1))/$SHARDS: generated in $(python3 -c "print(round($t1-$t0))") s, imported in $(python3 -c "print(round($t2-$t1))") s" >&2
  done
  echo "{\"shards\": $SHARDS, \"generate_seconds\": $gen_s, \"import_seconds\": $imp_s, \"import_max_rss_kib\": $imp_rss, \"text_bytes\": $text, \"end\": $END}" >"$TSDB/trainscope-import.json"
fi
cp "$TSDB/trainscope-import.json" "$WORK/import.json" 2>/dev/null ||
  echo '{}' >"$WORK/import.json"
[ "$IMPORT_ONLY" = 0 ] || exit 0
TSDB_BYTES=$(du -sb "$TSDB" | cut -f1)

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
PORT=$(free_port)
printf 'global:\n  scrape_interval: 15s\n' >"$WORK/prometheus.yml"
URL="http://127.0.0.1:$PORT"
start_prometheus() {
  # Retention far beyond the samples' age; the import's blocks are kept.
  prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$TSDB" \
    --storage.tsdb.retention.time=100y --web.listen-address="127.0.0.1:$PORT" \
    --query.max-samples="$MAX_SAMPLES" --query.timeout=5m \
    >>"$WORK/prometheus.log" 2>&1 &
  PROM_PID=$!
  for _ in $(seq 1 600); do
    curl -fs "$URL/-/ready" >/dev/null 2>&1 && break
    kill -0 "$PROM_PID" 2>/dev/null ||
      { cat "$WORK/prometheus.log" >&2; exit 1; }
    sleep 1
  done
  curl -fs "$URL/-/ready" >/dev/null || { echo "run.sh: prometheus not ready" >&2; exit 1; }
}
stop_prometheus() {
  kill "$PROM_PID" 2>/dev/null || true
  wait "$PROM_PID" 2>/dev/null || true
  PROM_PID=""
}
start_prometheus
# The recording rules the triage reads, backfilled once per TSDB in two
# passes (the second pass' rules read the first's records).
if [ ! -e "$TSDB/trainscope-rules.json" ]; then
  rules_t0=$(date +%s.%N)
  RULES=dashboards/alerts.yaml  # the shipped rules, as generated
  START=$(python3 -c "print($END - int($MINUTES * 60))")
  for pass in "training_job_pod_peer_pod:trainscope_worker_ps_traffic_bytes:rate1m" \
      "training_job_pod:trainscope_ps_traffic_bytes:rate1m training_job_pod:trainscope_worker_ps_traffic_bytes:rate1m"; do
    records=()
    for r in $pass; do records+=(--record "$r"); done
    python3 "$HERE/backfill_rules.py" --url "$URL" --rules "$RULES" \
      "${records[@]}" --start "$START" --end "$END" --out "$WORK/rules.om"
    stop_prometheus
    promtool tsdb create-blocks-from openmetrics "$WORK/rules.om" "$TSDB" \
      >"$WORK/rules-import.log" 2>&1 || { cat "$WORK/rules-import.log" >&2; exit 1; }
    rm -f "$WORK/rules.om"
    start_prometheus
  done
  echo "{\"backfill_seconds\": $(python3 -c "print(round($(date +%s.%N) - $rules_t0, 1))")}" \
    >"$TSDB/trainscope-rules.json"
fi
# Several import parts are overlapping blocks: let Prometheus merge them
# (vertical compaction) before measuring, so queries read one block.
blocks() {
  curl -fs "$URL/metrics" | awk '/^prometheus_tsdb_blocks_loaded / {print $2}'
}
for _ in $(seq 1 1800); do
  [ "$(blocks)" = "1" ] && break
  sleep 2
done
echo "prometheus ready on $URL with $(blocks) block(s)" >&2

python3 "$HERE/proxy.py" --upstream "$URL" --log "$WORK/queries.jsonl" \
  --port-file "$WORK/proxy.port" &
PROXY_PID=$!
for _ in $(seq 1 50); do [ -e "$WORK/proxy.port" ] && break; sleep 0.1; done
PROXY="http://127.0.0.1:$(cat "$WORK/proxy.port")"

JOB_NS=$(python3 -c "import json; print(json.load(open('$WORK/summary.json'))['largest_job']['namespace'])")
JOB=$(python3 -c "import json; print(json.load(open('$WORK/summary.json'))['largest_job']['name'])")

# One case: timed straight against Prometheus, then once more through the
# proxy to count the queries (that run's wall time is reported too).
measure() {
  local name=$1; shift
  local args=(report --prometheus "$URL" --end "$END" --range "$RANGE"
              --step "$STEP" --json "$@")
  set +e
  (ulimit -v $((MEMLIMIT * 1024)); /usr/bin/time -v -o "$WORK/$name.time" \
     "$CLI" "${args[@]}" >"$WORK/$name.json" 2>"$WORK/$name.err")
  echo $? >"$WORK/$name.rc"
  : >"$WORK/queries.jsonl"
  args[2]=$PROXY
  (ulimit -v $((MEMLIMIT * 1024)); /usr/bin/time -v -o "$WORK/$name.proxy.time" \
     "$CLI" "${args[@]}" >/dev/null 2>&1)
  set -e
  cp "$WORK/queries.jsonl" "$WORK/$name.queries.jsonl"
}
measure cluster "${BATCH[@]}"
measure job --namespace "$JOB_NS" --job "$JOB"
[ "$COMPARE" = 1 ] && measure unbatched --batch-series 0
[ "$COMPARE" != 0 ] && measure exhaustive "${BATCH[@]}" --triage off
curl -fs "$URL/metrics" | grep -E '^(process_resident_memory_bytes|prometheus_tsdb_head_series|go_memstats_heap_inuse_bytes) ' >"$WORK/prometheus.metrics" || true
ps -o rss= -p "$PROM_PID" >"$WORK/prometheus.rss" || true

python3 "$HERE/report.py" --work "$WORK" --tsdb-bytes "$TSDB_BYTES" \
  --range "$RANGE" --step "$STEP" --max-samples "$MAX_SAMPLES" \
  --memory-limit-mib "$MEMLIMIT" --note "$NOTE" --out "$OUT" $CHECK
