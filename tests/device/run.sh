#!/usr/bin/env bash
# Device check for issue 38: what NVML's GPM interface gives on a real GPU.
#
# The one command for a machine with an NVIDIA GPU, run from the repository
# root. It compiles nothing: the probe is built beforehand on the build machine
#
#   gcc -O2 -Wall -o .device-carry/gpm_probe tests/device/gpm_probe.c -ldl
#
# and carried (.device-carry/ is git-ignored locally). It runs the probe idle,
# then under each load of tests/device/gpu_load.py when PyTorch with CUDA is
# there (compute fp32, compute bf16, memory copy, half-idle, one-SM spin),
# beside nvidia-smi, and writes everything to $OUT/gpm.txt (default
# /tmp/gpm-out). Every step has a timeout; the whole script stays under
# about 4 minutes.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpm-out}
mkdir -p "$OUT"
PROBE=${PROBE:-$PWD/.device-carry/gpm_probe}
LOAD=$PWD/tests/device/gpu_load.py
LOAD_SECONDS=${LOAD_SECONDS:-13}
DEADLINE=${DEADLINE:-200}   # seconds after which no new load starts
SMI_Q=name,driver_version,mig.mode.current,utilization.gpu,utilization.memory,memory.used,power.draw,clocks.sm,temperature.gpu

have() { command -v "$1" >/dev/null 2>&1; }

smi() {
  if have nvidia-smi; then
    echo "## nvidia-smi --query-gpu ($1)"
    timeout 15 nvidia-smi --query-gpu=$SMI_Q --format=csv 2>&1
    echo "## nvidia-smi dmon -c 3 -s u ($1)"
    timeout 15 nvidia-smi dmon -c 3 -s u 2>&1
    if [ "$GPM_DMON" = 1 ]; then
      echo "## nvidia-smi dmon --gpm-metrics 1,2,3,5,7,10,12,20,21,60,61 -c 2 ($1)"
      timeout 15 nvidia-smi dmon --gpm-metrics 1,2,3,5,7,10,12,20,21,60,61 -c 2 2>&1
    fi
  else
    echo "## nvidia-smi: not on this machine"
  fi
}

probe() {
  echo "## gpm_probe $1 ${2:-1000}"
  if [ -x "$PROBE" ]; then
    timeout 30 "$PROBE" "$1" "${2:-1000}" 2>&1
    echo "(probe exit $?)"
  else
    echo "probe binary $PROBE missing"
  fi
}

run_load() {
  local mode=$1 ready="$OUT/.ready-$1" pid waited=0
  echo
  echo "# load: $mode (started at ${SECONDS}s)"
  if [ "$SECONDS" -ge "$DEADLINE" ]; then
    echo "skipped: past the ${DEADLINE}s deadline"
    return
  fi
  rm -f "$ready"
  timeout $((LOAD_SECONDS + 60)) python3 "$LOAD" "$mode" "$LOAD_SECONDS" "$ready" > "$OUT/load-$mode.txt" 2>&1 &
  pid=$!
  while [ ! -e "$ready" ] && kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 90 ]; do
    sleep 0.5; waited=$((waited + 1))
  done
  if [ ! -e "$ready" ]; then
    echo "load $mode never became ready"
    kill "$pid" 2>/dev/null; wait "$pid"
    cat "$OUT/load-$mode.txt"
    return
  fi
  sleep 1
  probe "load-$mode"
  [ "$mode" = fp32mm ] && probe "load-$mode-200ms" 200
  smi "load $mode"
  wait "$pid"
  echo "## load output ($mode, exit $?)"
  cat "$OUT/load-$mode.txt"
}

main() {
  echo "# gpm device check $(date -u +%FT%TZ)"
  echo "## environment"
  have nvidia-smi && timeout 15 nvidia-smi -L 2>&1
  head -2 /etc/os-release 2>/dev/null
  uname -r
  GPM_DMON=0
  if have nvidia-smi && timeout 15 nvidia-smi dmon --help 2>&1 | grep -qi 'gpm-metrics'; then
    GPM_DMON=1
  fi
  echo "nvidia-smi dmon --gpm-metrics available: $GPM_DMON"

  echo
  echo "# idle"
  probe idle
  smi idle

  if timeout 60 python3 -c 'import torch; assert torch.cuda.is_available(); print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' 2>&1; then
    for mode in fp32mm bf16mm copy halfidle narrow; do
      run_load "$mode"
    done
  else
    echo "no PyTorch with CUDA here: idle figures only"
  fi

  echo
  echo "# idle again (at ${SECONDS}s)"
  sleep 2
  probe idle-after
  echo "# finished after ${SECONDS}s"
}

main > "$OUT/gpm.txt" 2>&1
rm -f "$OUT"/.ready-*
# A compact view for the caller's terminal; the full record is $OUT/gpm.txt.
grep -E '^# |gpm id=|util\(|gpm support|gpm:|name |driver |mig mode|^(NVIDIA|name,)|^ +0 |^# gpu|load output|TFLOP|GB/s|halfidle:|narrow:|missing|never|skipped|no PyTorch' "$OUT/gpm.txt" | cut -c1-200
