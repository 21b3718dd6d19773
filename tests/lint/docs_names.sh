#!/usr/bin/env bash
# Fails when a metric or a diagnosis kind is not documented: every
# trainscope_* family of the golden scrapes and every "trainscope_*" name in
# the agent's and collectors' sources must appear in docs/metrics.md; every
# diagnosis kind of agent/diagnosis/diagnosis.h in docs/diagnosis.md and
# docs/runbooks.md. Names the missing ones.
set -euo pipefail
cd "$(dirname "$0")/../.."
missing=0
check() {  # name, doc
  if ! grep -qw -- "$1" "$2"; then
    echo "docs_names: $1 is not in $2"
    missing=1
  fi
}
mapfile -t metrics < <(
  { grep -ho '^# TYPE trainscope_[a-z0-9_]*' tests/golden/*.prom | awk '{print $3}'
    grep -rhoE '"trainscope_[a-z0-9_]*[a-z0-9]"' agent collectors include \
      --include='*.cc' --include='*.h' | tr -d '"'
  } | sort -u)
[ ${#metrics[@]} -gt 50 ] ||
  { echo "docs_names: found only ${#metrics[@]} metric names: the patterns are stale"; exit 1; }
for m in "${metrics[@]}"; do
  # A name that only prefixes longer ones (trainscope_pod_ + a suffix) is
  # documented when some documented name starts with it.
  grep -qE -- "\b${m}[a-z0-9_]*\b" docs/metrics.md ||
    { echo "docs_names: $m is not in docs/metrics.md"; missing=1; }
done
mapfile -t kinds < <(grep -oE 'std::string_view k[A-Za-z]+ =[[:space:]]*"[a-z_]+"|^[[:space:]]*"[a-z_]+";' \
  agent/diagnosis/diagnosis.h | grep -oE '"[a-z_]+"' | tr -d '"' | sort -u)
[ ${#kinds[@]} -ge 10 ] ||
  { echo "docs_names: found only ${#kinds[@]} diagnosis kinds: the pattern is stale"; exit 1; }
for k in "${kinds[@]}"; do
  check "$k" docs/diagnosis.md
  check "$k" docs/runbooks.md
done
[ "$missing" = 0 ] && echo "docs_names: ${#metrics[@]} metric names and ${#kinds[@]} diagnosis kinds documented"
exit "$missing"
