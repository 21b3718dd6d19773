#!/usr/bin/env bash
# The sanitizer suite (docs/reliability.md, "Sanitizers and fuzzing").
#
#   scripts/sanitize.sh [--thread] [--phase all|build|test] [ctest arguments...]
#
# Builds a second tree with clang: ASan+UBSan, plus libFuzzer coverage and
# the fuzz targets (build-asan/), or TSan with --thread (build-tsan/). Then
# runs the unit and integration tests there, and for ASan each fuzz target for
# TRAINSCOPE_FUZZ_SECONDS (default 20). Left to the normal build
# (scripts/test.sh, warnings as errors): the scenario, deploy, bench-smoke,
# browser, lint and soak labels, which time real training runs, need the
# npm tools, read the source tree or judge the agent's memory. --phase
# build only builds (TRAINSCOPE_SANITIZE_JOBS compile jobs, default one per
# core; TRAINSCOPE_WERROR=ON makes warnings errors), --phase test only runs
# the tests. Extra arguments go to ctest, e.g.
# `-R Http` or `-L fuzz`.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=address phase=all
while [ $# -gt 0 ]; do
  case $1 in
    --thread) mode=thread ;;
    --phase) phase=$2; shift ;;
    --phase=*) phase=${1#--phase=} ;;
    *) break ;;
  esac
  shift
done
case $phase in
  all | build | test) ;;
  *) echo "sanitize.sh: --phase must be all, build or test" >&2; exit 2 ;;
esac

if [ "$mode" = thread ]; then
  build_dir=${TRAINSCOPE_SANITIZE_BUILD_DIR:-build-tsan}
  flags=(-DTRAINSCOPE_SANITIZE=thread -DTRAINSCOPE_FUZZ=OFF)
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/sanitizers/tsan.supp ${TSAN_OPTIONS:-}"
else
  build_dir=${TRAINSCOPE_SANITIZE_BUILD_DIR:-build-asan}
  flags=(-DTRAINSCOPE_SANITIZE=address,undefined -DTRAINSCOPE_FUZZ=ON
         -DTRAINSCOPE_FUZZ_SECONDS="${TRAINSCOPE_FUZZ_SECONDS:-20}")
  source tests/sanitizers/asan_env.sh
fi
source scripts/ccache-env.sh
if [ "$phase" != test ]; then
  bash scripts/install-deps.sh
  # -O1, which the ASan and libFuzzer documentation suggest: under the
  # sanitizers it compiles in about a quarter less time than -O2.
  CC=clang CXX=clang++ cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
    -DTRAINSCOPE_SCENARIO_TESTS=OFF \
    -DTRAINSCOPE_DEPLOY_E2E=OFF -DTRAINSCOPE_WERROR="${TRAINSCOPE_WERROR:-OFF}" \
    "${flags[@]}" "${launcher[@]}" >/dev/null
  cmake --build "$build_dir" -j "${TRAINSCOPE_SANITIZE_JOBS:-$(nproc)}"
fi
[ "$phase" = build ] && exit 0
ctest --test-dir "$build_dir" --output-on-failure --timeout 900 -j "$(nproc)" \
  -LE 'scenario|deploy|bench-smoke|lint|browser|soak' "$@"
