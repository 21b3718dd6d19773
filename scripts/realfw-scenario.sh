#!/usr/bin/env bash
# Runs one real-framework scenario (bench/scenarios/realfw-*.json) through
# `trainsim verify`, or skips it (exit 77, ctest's SKIP_RETURN_CODE) when
# the workloads venv that scripts/install-workloads.sh builds is absent.
# Usage: realfw-scenario.sh TRAINSIM_BIN verify --scenario FILE [ARGS...]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
python="${TRAINSIM_REPO:-$repo}/.venv-workloads/bin/python"
if [[ ! -x "$python" ]]; then
  echo "SKIP: $python is absent: the real TensorFlow/PyTorch workloads are not installed." >&2
  echo "SKIP: run 'bash scripts/install-workloads.sh' (needs PyPI) to run this scenario." >&2
  exit 77
fi
exec "$@"
