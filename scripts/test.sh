#!/usr/bin/env bash
# Quick start (2): install what is missing, build, and run the whole test
# suite (root: privileged tests use the real kernel).
#
# Two trees, both with warnings as errors:
# - build/ (gcc): only what the system tests run (target system-test-deps:
#   the agent, the CLI, trainsim, the benchmarks, the soak), then every
#   trainsim scenario through `trainsim verify` with the real agent and the
#   deploy, bench-smoke, browser, lint and soak labels, several at a time;
# - build-asan/ (clang, ASan+UBSan, scripts/sanitize.sh): the unit and
#   integration tests, privileged ones included, and each fuzz target.
# The sanitizer tree builds at the lowest CPU and IO priority beside the
# normal build and the scenarios (an idle CPU cgroup where the kernel has
# one, idle_cgroup below); its tests run after
# the scenarios, never beside them (its privileged tests share cgroups and
# BPF attachments with them).
#
# With arguments, builds all of build/ and runs only ctest there with them,
# e.g. `-L unit` or `-LE privileged`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
build_dir=${TRAINSCOPE_BUILD_DIR:-build}
ctest_args=(--test-dir "$build_dir" --output-on-failure --timeout 600)
# The system tests' slots: one per test (the real frameworks run alone,
# tests/unit/trainsim/CMakeLists.txt); most of their time is sleep.
system_jobs=${TRAINSCOPE_SYSTEM_TEST_JOBS:-3}
# A system test that fails is run again (three tries in all) before the run
# fails: on two shared cores, beside two more scenarios and a compiler, a
# scenario's timing checks fail now and then, once twice in a row
# (docs/reliability.md, "Retries"). Every failed try's verdict stays in the
# log, listed at the end.
system_tries=${TRAINSCOPE_SYSTEM_TEST_TRIES:-3}

failed_scenarios() {
  # The verdicts of the failed scenarios, last, where a truncated CI log
  # still shows them (the full output is in Testing/Temporary/LastTest.log).
  local verdicts
  verdicts=$(grep -h '^{"scenario":.*"passed":false' "$build_dir"/Testing/Temporary/LastTest*.log 2>/dev/null |
    cut -c1-1500 || true)
  if [ -z "$verdicts" ]; then
    echo "[test] ${2:-no failed scenario verdicts}"
    return 0
  fi
  echo "[test] ${1:-failed} scenario verdicts:"
  echo "$verdicts"
}

failed_tests() {
  # Every test of a build tree ($1, default build/) that failed, with the
  # failures its last try reported and the end of its output: a failure
  # without a scenario verdict (a what-if check, a timeout, a sanitizer
  # report) must still show in the tail of a CI log, which keeps only the
  # head and the end of a long run.
  local dir=${1:-$build_dir}
  local failed=$dir/Testing/Temporary/LastTestsFailed.log
  [ -s "$failed" ] || return 0
  echo "[test] failed tests of $dir:"
  local name
  while IFS= read -r name; do
    name=${name#*:}
    echo "[test] --- $name, its failures (each with the 6 lines after it) and the last 15 lines of its output:"
    awk -v t="$name" '
      $0 ~ /^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); in_test = ($0 == t); if (in_test) n = 0; next }
      in_test && /^<end of output>/ { in_test = 0; next }
      in_test { lines[n++] = $0 }
      END {
        shown = 0
        for (i = 0; i < n - 15 && shown < 40; i++) {
          if (lines[i] !~ /Failure|ERROR: AddressSanitizer|runtime error:/) continue
          for (j = i; j < n - 15 && j <= i + 6 && shown < 40; j++) { print lines[j]; shown++ }
          i = j - 1
        }
        if (shown) print "[test] ..."
        for (i = (n > 15 ? n - 15 : 0); i < n; i++) print lines[i]
      }
    ' "$dir"/Testing/Temporary/LastTest.log | cut -c1-400 || true
  done <"$failed"
}

# A CPU cgroup whose tasks run only when nothing else wants a CPU
# (cpu.idle, Linux 5.15): nice alone does not hold the sanitizer build back,
# since the scheduler weighs each scenario's pod cgroups as a group against
# every task beside them (a nice 19 clang took 44% of a core from free-running
# scenarios, which then ran at a fifth of their speed). Prints its cgroup.procs
# path, nothing where no such cgroup can be made (then nice alone).
idle_cgroup() {
  local dir
  for dir in /sys/fs/cgroup/cpu /sys/fs/cgroup; do
    # v1's cpu hierarchy, or v2's root giving its children the cpu controller.
    [ -f "$dir/cpu.idle" ] || grep -qsw cpu "$dir/cgroup.subtree_control" ||
      continue
    mkdir -p "$dir/trainscope-idle-build" 2>/dev/null || continue
    if echo 1 >"$dir/trainscope-idle-build/cpu.idle" 2>/dev/null; then
      echo "$dir/trainscope-idle-build/cgroup.procs"
      return
    fi
    rmdir "$dir/trainscope-idle-build" 2>/dev/null || true
  done
}
start=$(date +%s)
sanitize_build_rc=0 sanitize_pid=
idle_procs=
if [ $# -eq 0 ]; then
  sanitize_log=$(mktemp /tmp/trainscope-sanitize-build.XXXXXX)
  idle_procs=$(idle_cgroup)
  # Its end is printed below when the build fails; the file goes either way,
  # and so does the idle cgroup (empty once the build has ended).
  trap 'rm -f "$sanitize_log"; [ -z "$idle_procs" ] || rmdir "$(dirname "$idle_procs")" 2>/dev/null || true' EXIT
  io_idle=()
  if command -v ionice >/dev/null; then io_idle=(ionice -c 3); fi
  echo "[test] sanitizer build: nice 19${io_idle:+, IO idle}${idle_procs:+, CPU cgroup $(dirname "$idle_procs") (cpu.idle)}"
  TRAINSCOPE_WERROR=ON TRAINSCOPE_SANITIZE_JOBS=$(nproc) IDLE_PROCS=$idle_procs \
    nice -n 19 "${io_idle[@]}" bash -c \
    '[ -z "$IDLE_PROCS" ] || echo $$ >"$IDLE_PROCS"; exec bash scripts/sanitize.sh --phase build' \
    >"$sanitize_log" 2>&1 &
  sanitize_pid=$!
fi
# Warnings are errors here (and so in CI), with -Wshadow on.
if [ $# -eq 0 ]; then
  TRAINSCOPE_WERROR=ON bash scripts/build.sh system-test-deps
else
  TRAINSCOPE_WERROR=ON bash scripts/build.sh
fi
echo "[test] normal tree built after $(($(date +%s) - start)) s"
# The real-framework scenarios (ctest -L realfw) need TensorFlow and
# PyTorch; without them (offline) those tests skip, saying why.
bash scripts/install-workloads.sh ||
  echo "[test] workloads venv not installed: the realfw scenarios will be skipped" >&2
# The platform tests (ctest -L platform) run a real etcd and kube-apiserver,
# and the Prometheus Operator and Prometheus, built once from their Go
# modules into the tool cache (docs/platform.md).
bash scripts/install-platform.sh
# The Helm chart's tests (ctest -L deploy, deploy.chart_*) run the real helm,
# built the same way (docs/deploy.md, "Helm").
bash scripts/install-helm.sh
# The mixin's tests (deploy.mixin_*) run the real jsonnet and jb, built the
# same way (docs/dashboards.md).
bash scripts/install-jsonnet.sh
echo "[test] platform tools ready after $(($(date +%s) - start)) s"

if [ $# -gt 0 ]; then
  rc=0
  ctest "${ctest_args[@]}" -j "$(nproc)" "$@" || rc=$?
  [ "$rc" -eq 0 ] || { failed_scenarios; failed_tests; }
  exit "$rc"
fi

rc=0
ctest "${ctest_args[@]}" -j "$system_jobs" --repeat "until-pass:$system_tries" \
  -L 'scenario|deploy|bench-smoke|browser|lint|soak' || rc=$?
echo "[test] normal build's suites done after $(($(date +%s) - start)) s (rc $rc)"
wait "$sanitize_pid" || sanitize_build_rc=$?
echo "[test] sanitizer tree built after $(($(date +%s) - start)) s (rc $sanitize_build_rc)"
# Its tests run at normal priority, after the scenarios.
[ -z "$idle_procs" ] || rmdir "$(dirname "$idle_procs")" 2>/dev/null || true
if [ "$sanitize_build_rc" -ne 0 ]; then tail -n 80 "$sanitize_log"; fi
san_rc=$sanitize_build_rc
if [ "$sanitize_build_rc" -eq 0 ]; then
  bash scripts/sanitize.sh --phase test || san_rc=$?
fi
echo "[test] all done after $(($(date +%s) - start)) s; normal rc $rc, sanitizer rc $san_rc"
if [ "$rc" -eq 0 ]; then
  failed_scenarios "passed on a later try, failed tries'" \
    "no scenario needed another try"
else
  failed_scenarios
  failed_tests
fi
if [ "$san_rc" -ne 0 ]; then
  failed_tests "${TRAINSCOPE_SANITIZE_BUILD_DIR:-build-asan}"
fi
[ "$rc" -eq 0 ] && [ "$san_rc" -eq 0 ]
