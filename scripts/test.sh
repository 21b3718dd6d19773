#!/usr/bin/env bash
# Quick start (2): install what is missing, build, and run the whole test
# suite: unit, golden end-to-end, and privileged tests on the real kernel
# (they need root). Extra arguments go to ctest, e.g. `-L unit` or
# `-LE privileged`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
# The real-framework scenarios (ctest -L realfw) need TensorFlow and
# PyTorch; without them (offline) those tests skip, saying why.
bash scripts/install-workloads.sh ||
  echo "[test] workloads venv not installed: the realfw scenarios will be skipped" >&2
build_dir=${TRAINSCOPE_BUILD_DIR:-build}
ctest --test-dir "$build_dir" --output-on-failure --timeout 600 -j "$(nproc)" "$@"
