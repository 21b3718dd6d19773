#!/usr/bin/env bash
# Long fuzzing campaigns (docs/reliability.md, "Fuzzing").
#
#   bench/fuzz/run.sh [-n RUNS] [-t MAX_SECONDS] [-j JOBS] [BUILD_DIR] [TARGET...]
#
# Runs each fuzz target of BUILD_DIR (default build-asan, made by
# scripts/sanitize.sh) for RUNS executions (default 10,000,000) or
# MAX_SECONDS (default 3600), whichever comes first, JOBS at a time
# (default: the number of cores), from the seeds of tests/fuzz and a corpus
# kept in BUILD_DIR/fuzz-campaign/<target>. Prints a table and writes
# bench/results/<date>-fuzz.json. Exit 1 when any target found a crash; its
# input is left in BUILD_DIR/fuzz-campaign/<target>/artifacts.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=10000000 max_seconds=3600 jobs=$(nproc)
while getopts "n:t:j:" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    t) max_seconds=$OPTARG ;;
    j) jobs=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
build_dir=${1:-build-asan}
shift || true
fuzz_bin=$build_dir/tests/fuzz
if [ ! -d "$fuzz_bin" ]; then
  echo "no fuzz targets in $fuzz_bin: run scripts/sanitize.sh -L fuzz first" >&2
  exit 2
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$fuzz_bin"/*_fuzz; do targets+=("$(basename "$f" _fuzz)"); done
fi
source tests/sanitizers/asan_env.sh
out_dir=$build_dir/fuzz-campaign

campaign() {
  local name=$1 work=$out_dir/$1
  # The seeds of the ctest fuzz.<name> (corpus/<name> and fixture trees);
  # ctest prints every argument in double quotes, which are not part of it.
  local seeds
  seeds=$(ctest --test-dir "$build_dir" -N -V -R "^fuzz\.$name\$" 2>/dev/null |
    sed -n 's/.*Test command: //p' | cut -d' ' -f6- | tr -d '"')
  local start rc=0
  start=$(date +%s)
  # shellcheck disable=SC2086
  FUZZ_FLAGS="-runs=$runs" bash tests/fuzz/run_fuzzer.sh \
    "$fuzz_bin/${name}_fuzz" "$max_seconds" "$work" $seeds >/dev/null || rc=$?
  echo "$rc $(($(date +%s) - start))" >"$work/result"
}

running=0
for name in "${targets[@]}"; do
  campaign "$name" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

python3 - "$out_dir" "$runs" "${targets[@]}" <<'PY'
import datetime, json, pathlib, re, sys
out_dir, runs, names = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
rows, failed = [], False
for name in names:
    work = out_dir / name
    rc, seconds = (int(x) for x in (work / "result").read_text().split())
    log = (work / "log").read_text(errors="replace")
    stat = lambda key: int(m.group(1)) if (m := re.search(
        rf"stat::{key}:\s+(\d+)", log)) else None
    cov = re.findall(r"cov: (\d+) ft: (\d+)", log)
    artifacts = sorted(p.name for p in (work / "artifacts").iterdir())
    rows.append({"target": name, "exit": rc, "seconds": seconds,
                 "executions": stat("number_of_executed_units"),
                 "exec_per_s": stat("average_exec_per_sec"),
                 "peak_rss_mb": stat("peak_rss_mb"),
                 "coverage_edges": int(cov[-1][0]) if cov else None,
                 "features": int(cov[-1][1]) if cov else None,
                 "corpus_files": sum(1 for _ in (work / "corpus").iterdir()),
                 "artifacts": artifacts})
    failed |= rc != 0
print(f"{'target':<14}{'executions':>12}{'exec/s':>9}{'seconds':>9}"
      f"{'edges':>8}{'rss MB':>8}  result")
for r in rows:
    print(f"{r['target']:<14}{r['executions'] or 0:>12}{r['exec_per_s'] or 0:>9}"
          f"{r['seconds']:>9}{r['coverage_edges'] or 0:>8}"
          f"{r['peak_rss_mb'] or 0:>8}  "
          + ("ok" if r["exit"] == 0 else "FOUND " + " ".join(r["artifacts"])))
day = datetime.date.today().isoformat()
path = pathlib.Path("bench/results") / f"{day}-fuzz.json"
path.write_text(json.dumps({"date": day, "runs_asked": runs, "targets": rows},
                           indent=1) + "\n")
print(f"written {path}")
sys.exit(1 if failed else 0)
PY
