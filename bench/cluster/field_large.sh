#!/bin/sh
# The field experiment at full size (DESIGN.md "The problem, from the
# field"): 5 nodes, 5 PS, 50 workers, the embedding placed round-robin, in the
# three placements (PS with workers, PS isolated, variables partitioned).
# Runs each through `trainsim verify` (5 agents + Prometheus) and prints a
# side-by-side table of the PS traffic shares and the workers' step counts
# from trainsim's ground truth. Needs root; takes about 5 minutes; not in CI.
#
#   bench/cluster/field_large.sh [BUILD_DIR]   (default: build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
trainsim=$build/bench/trainsim/trainsim
agent=$build/agent/trainscope-agent
out=$(mktemp -d /tmp/trainsim-field-large.XXXXXX)
trap 'rm -rf "$out"' EXIT
for layout in ps-with-workers ps-isolated partitioned; do
  scenario=$here/field-large-$layout.json
  echo "== $layout" >&2
  "$trainsim" verify --scenario "$scenario" --agent "$agent" \
      > "$out/$layout.log" 2>&1 || true
  tail -n 1 "$out/$layout.log" >&2
done
printf '\n%-16s %-34s %-10s %s\n' placement "PS traffic share (ps-0..ps-4)" \
    verdict "worker steps min/median/max"
for layout in ps-with-workers ps-isolated partitioned; do
  log=$out/$layout.log
  shares=$(grep '^PS traffic share' "$log" | sed 's/.*: //; s/ctr-ps-[0-9]=//g')
  verdict=$(tail -n 1 "$log" | sed -n 's/.*"passed":\([a-z]*\).*/\1/p')
  steps=$(grep '^steps per worker' "$log" | tr ' ' '\n' | sed -n 's/.*=//p' |
          sort -n | awk '{a[NR]=$1} END {if (NR) printf "%d/%d/%d", a[1], a[int((NR+1)/2)], a[NR]}')
  printf '%-16s %-34s %-10s %s\n' "$layout" "$shares" "${verdict:-?}" "$steps"
done
