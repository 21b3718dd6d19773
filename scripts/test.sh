#!/usr/bin/env bash
# Quick start (2): install what is missing, build, and run the whole test
# suite: unit, golden end-to-end, and privileged tests on the real kernel
# (they need root). Extra arguments go to ctest, e.g. `-L unit` or
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
rc=0
ctest --test-dir "$build_dir" --output-on-failure --timeout 600 -j "$(nproc)" "$@" || rc=$?
if [ "$rc" -ne 0 ]; then
  # The verdicts of the failed scenarios, last, where a truncated CI log
  # still shows them (the full output is in Testing/Temporary/LastTest.log).
  echo "[test] failed scenario verdicts:"
  grep -h '^{"scenario":.*"passed":false' "$build_dir"/Testing/Temporary/LastTest*.log 2>/dev/null |
    cut -c1-1500 || true
fi
exit "$rc"
