#!/usr/bin/env bash
# Device check: the real agent's GPU collector against the real NVML
# (docs/gpu.md, "Checked on a real GPU"). Runs from a folder holding the
# stripped agent, its shared libraries under lib/ (all but glibc's, from
# `ldd`), an empty PodList as pods.json and this script; writes what it saw
# to $OUT. Loads the GPU with PyTorch when the machine has it.
set -u
cd "$(dirname "$0")"
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,utilization.gpu,memory.used,memory.total,power.draw,temperature.gpu --format=csv; ldd --version | head -1; cat /etc/os-release | head -2; } > "$OUT/env.txt" 2>&1
export LD_LIBRARY_PATH=$PWD/lib
./trainscope-agent --version > "$OUT/version.txt" 2>&1
./trainscope-agent --discovery file --pod-file pods.json --flows off --profiler off \
  --listen 127.0.0.1:19476 --interval 1 --node-name device > "$OUT/agent.log" 2>&1 &
pid=$!
sleep 6
curl -s 127.0.0.1:19476/metrics > "$OUT/metrics-idle.prom"
# Load the GPU if anything on the machine can (PyTorch), and scrape again.
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  python3 - <<'PY' > "$OUT/load.txt" 2>&1 &
import time, torch
a = torch.randn(8192, 8192, device="cuda")
end = time.time() + 12
while time.time() < end:
    b = a @ a
torch.cuda.synchronize()
print("done")
PY
  load=$!
  sleep 8
  curl -s 127.0.0.1:19476/metrics > "$OUT/metrics-load.prom"
  nvidia-smi --query-gpu=utilization.gpu,memory.used,power.draw --format=csv > "$OUT/smi-load.txt"
  wait $load
else
  echo "no torch with CUDA here" > "$OUT/load.txt"
fi
kill $pid; wait $pid
grep -h '^trainscope_gpu\|^trainscope_collector_up' "$OUT"/metrics-*.prom | head -60
cat "$OUT/env.txt"; tail -5 "$OUT/agent.log"; cat "$OUT/load.txt"
