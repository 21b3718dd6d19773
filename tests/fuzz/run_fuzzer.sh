#!/usr/bin/env bash
# run_fuzzer.sh FUZZER SECONDS WORK_DIR SEED_DIR_OR_FILE...
# Fuzzes for SECONDS from the seeds. New inputs go to WORK_DIR (kept between
# runs, so coverage accumulates in a build tree); a crash, a leak, a
# sanitizer report, a timeout (10 s per input) or 2 GiB of memory fails the
# test, and the input that did it is left in WORK_DIR/artifacts (crash-*,
# leak-*, timeout-*, oom-*) with its reproduction command printed.
# FUZZ_FLAGS adds libFuzzer flags (bench/fuzz/run.sh: -runs=N).
set -euo pipefail
fuzzer=$1 seconds=$2 work=$3
shift 3
mkdir -p "$work/corpus" "$work/artifacts"
# libFuzzer takes directories; single seed files are copied in.
seed_dirs=()
for seed in "$@"; do
  if [ -d "$seed" ]; then
    seed_dirs+=("$seed")
  elif [ -f "$seed" ]; then
    cp "$seed" "$work/corpus/seed-$(basename "$seed")"
  fi
done
rc=0
# shellcheck disable=SC2086
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" ${FUZZ_FLAGS:-} \
  "$work/corpus" "${seed_dirs[@]}" 2>"$work/log" || rc=$?
grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|Done )' "$work/log" || true
if [ "$rc" -ne 0 ]; then
  tail -n 60 "$work/log"
  for a in "$work"/artifacts/*; do
    [ -e "$a" ] && echo "reproduce: $fuzzer $a" && echo "regression: copy it to tests/fuzz/corpus/$(basename "$fuzzer" _fuzz)/"
  done
fi
exit "$rc"
