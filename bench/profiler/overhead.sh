#!/usr/bin/env bash
# Throughput of a CPU-bound process in a pod with and without a 99 Hz CPU
# profile of that pod, alternating runs, medians (docs/performance.md,
# "Profiler"). Root; cgroup v2 (pure or hybrid); a kernel with BPF.
#   bench/profiler/overhead.sh BUILD_DIR [PAIRS] [SECONDS]
set -euo pipefail
build=${1:?usage: overhead.sh BUILD_DIR [PAIRS] [SECONDS]}
pairs=${2:-6}
secs=${3:-5}
agent=$build/agent/trainscope-agent
workload=$build/tests/integration/profiler_workload
v2=/sys/fs/cgroup
[ -e $v2/cgroup.controllers ] || v2=/sys/fs/cgroup/unified
uid=$(cat /proc/sys/kernel/random/uuid)
cid=$(head -c 32 /dev/urandom | sha256sum | cut -c1-64)
pod=$v2/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid//-/_}.slice
dir=$(mktemp -d)
agent_pid=
cleanup() {
  [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null || true
  rmdir "$pod/cri-containerd-$cid.scope" "$pod" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$pod/cri-containerd-$cid.scope"
cat > "$dir/pods.json" <<JSON
{"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"1"},"items":[
 {"metadata":{"name":"bench-0","namespace":"bench","uid":"$uid"},
  "spec":{"nodeName":"node-a","containers":[{"name":"m"}]},
  "status":{"phase":"Running","containerStatuses":[{"name":"m","containerID":"containerd://$cid"}]}}]}
JSON
port=$((20000 + RANDOM % 20000))
"$agent" --listen 127.0.0.1:$port --interval 5 --node-name node-a \
  --discovery file --pod-file "$dir/pods.json" --flows off 2>"$dir/agent.log" &
agent_pid=$!
for _ in $(seq 50); do curl -sf 127.0.0.1:$port/readyz >/dev/null && break; sleep 0.2; done

run() {  # $1 = profile|plain -> units per second
  "$workload" rate "$secs" > "$dir/out" &
  local w=$!
  echo $w > "$pod/cri-containerd-$cid.scope/cgroup.procs"
  if [ "$1" = profile ]; then
    curl -s -o /dev/null "127.0.0.1:$port/api/v1/profile?namespace=bench&pod=bench-0&seconds=$secs&hz=99&format=folded" &
  fi
  wait $w
  [ "$1" = profile ] && wait
  awk '/units_per_second/ {print $2}' "$dir/out"
}
plain=() profiled=()
for _ in $(seq "$pairs"); do
  plain+=("$(run plain)")
  profiled+=("$(run profile)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mp=$(median "${plain[@]}")
mq=$(median "${profiled[@]}")
echo "{\"pairs\": $pairs, \"seconds\": $secs, \"hz\": 99, \"plain_median\": $mp, \"profiled_median\": $mq, \"drop_percent\": $(awk -v a="$mp" -v b="$mq" 'BEGIN {printf "%.2f", 100*(a-b)/a}'), \"plain\": [$(IFS=,; echo "${plain[*]}")], \"profiled\": [$(IFS=,; echo "${profiled[*]}")]}"
