#!/usr/bin/env bash
# Configures and builds Trainscope into build/ (or $TRAINSCOPE_BUILD_DIR).
# Arguments name the targets to build (default: everything).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TRAINSCOPE_BUILD_DIR:-build}
source scripts/ccache-env.sh
# TRAINSCOPE_WERROR=ON (scripts/test.sh, hence CI): warnings are errors.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTRAINSCOPE_WERROR="${TRAINSCOPE_WERROR:-OFF}" "${launcher[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
