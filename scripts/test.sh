#!/usr/bin/env bash
# Quick start (2): install what is missing, build, and run the whole test
# suite (root: privileged tests use the real kernel).
#
# Two trees, run side by side so the whole fits the CI budget:
# - build/ (gcc, warnings as errors): the timed suites, every trainsim
#   scenario through `trainsim verify` with the real agent, the deploy,
#   bench-smoke, browser and lint labels;
# - build-asan/ (clang, ASan+UBSan, scripts/sanitize.sh): the unit and
#   integration tests and the fuzz targets. It builds and runs at the lowest
#   CPU priority beside the scenarios (which mostly wait on shaped links and
#   simulated compute); its privileged tests run after them, since they
#   share kernel objects (cgroups, BPF attachments) with the scenarios.
#
# With arguments, runs only ctest in build/ with them, e.g. `-L unit` or
# `-LE privileged`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Warnings are errors here (and so in CI), with -Wshadow on.
TRAINSCOPE_WERROR=ON bash scripts/build.sh
# The real-framework scenarios (ctest -L realfw) need TensorFlow and
# PyTorch; without them (offline) those tests skip, saying why.
bash scripts/install-workloads.sh ||
  echo "[test] workloads venv not installed: the realfw scenarios will be skipped" >&2
build_dir=${TRAINSCOPE_BUILD_DIR:-build}
ctest_args=(--test-dir "$build_dir" --output-on-failure --timeout 600 -j "$(nproc)")

failed_scenarios() {
  # The verdicts of the failed scenarios, last, where a truncated CI log
  # still shows them (the full output is in Testing/Temporary/LastTest.log).
  echo "[test] failed scenario verdicts:"
  grep -h '^{"scenario":.*"passed":false' "$build_dir"/Testing/Temporary/LastTest*.log 2>/dev/null |
    cut -c1-1500 || true
}

if [ $# -gt 0 ]; then
  rc=0
  ctest "${ctest_args[@]}" "$@" || rc=$?
  [ "$rc" -eq 0 ] || failed_scenarios
  exit "$rc"
fi

start=$(date +%s)
sanitize_log=$build_dir/sanitize-unprivileged.log
nice -n 19 bash scripts/sanitize.sh --phase unprivileged >"$sanitize_log" 2>&1 &
sanitize_pid=$!
rc=0
ctest "${ctest_args[@]}" -L 'scenario|deploy|bench-smoke|browser|lint' || rc=$?
echo "[test] normal build's suites done after $(($(date +%s) - start)) s (rc $rc)"
san_rc=0
wait "$sanitize_pid" || san_rc=$?
echo "[test] sanitizer build, unprivileged tests and fuzzing (rc $san_rc):"
tail -n 200 "$sanitize_log"
bash scripts/sanitize.sh --phase privileged || san_rc=$?
echo "[test] all done after $(($(date +%s) - start)) s; normal rc $rc, sanitizer rc $san_rc"
[ "$rc" -eq 0 ] || failed_scenarios
[ "$rc" -eq 0 ] && [ "$san_rc" -eq 0 ]
