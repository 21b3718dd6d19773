#!/usr/bin/env bash
# Runs one trainsim scenario against a real API server of its own
# (docs/trainsim.md, "A real API server"): starts the test platform
# (scripts/platform.sh up), applies the shipped RBAC (the Namespace,
# ServiceAccount, ClusterRole and ClusterRoleBinding of
# `kubectl kustomize daemonset/`), runs
#   TRAINSIM_BIN verify|run --scenario FILE ... --kubeconfig DIR/kubeconfig
# (trainsim gives the agents a TokenRequest token of that ServiceAccount),
# and stops the platform whatever happens: on exit, on SIGINT/SIGTERM, and,
# through a detached watchdog, when this script is killed outright (a ctest
# timeout). Exits with trainsim's status.
#
# Usage: platform-scenario.sh TRAINSIM_BIN verify|run --scenario FILE [ARGS...]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || {
  echo "usage: platform-scenario.sh TRAINSIM_BIN verify|run --scenario FILE [ARGS...]" >&2
  exit 2
}

dir=$(mktemp -d /tmp/trainsim-platform.XXXXXX)
down() {
  bash "$repo/scripts/platform.sh" down --dir "$dir" >/dev/null 2>&1 || true
}
child=
on_signal() {
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null && wait "$child" 2>/dev/null
  down
  exit 130
}
trap down EXIT
trap on_signal INT TERM
# SIGKILL leaves no trap: a watchdog outside our process group takes the
# platform down once this script is gone. Its output goes nowhere, so it
# holds no pipe of whoever runs us.
setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; bash "$2" down --dir "$3"' \
  watchdog $$ "$repo/scripts/platform.sh" "$dir" </dev/null >/dev/null 2>&1 &

now() { date +%s.%N; }
t0=$(now)
bash "$repo/scripts/platform.sh" up --dir "$dir"
t1=$(now)

# Only the kinds the agents' identity needs; the rest (DaemonSet, Service,
# the Operator's kinds) would do nothing without a controller manager.
kubectl --kubeconfig "$dir/kubeconfig" kustomize "$repo/daemonset" |
  awk -v RS='\n---\n' -v ORS='\n---\n' \
    '/(^|\n)kind: (Namespace|ServiceAccount|ClusterRole|ClusterRoleBinding)\n/' \
    >"$dir/rbac.yaml"
kubectl --kubeconfig "$dir/kubeconfig" apply -f "$dir/rbac.yaml" >"$dir/rbac.log" 2>&1 || {
  echo "platform-scenario: applying the shipped RBAC failed:" >&2
  cat "$dir/rbac.log" >&2
  exit 1
}
t2=$(now)
echo "platform-scenario: platform up in $(awk "BEGIN{printf \"%.1f\", $t1-$t0}") s, RBAC applied in $(awk "BEGIN{printf \"%.1f\", $t2-$t1}") s" >&2

set +e
"$@" --kubeconfig "$dir/kubeconfig" &
child=$!
wait "$child"
rc=$?
set -e
child=
t3=$(now)
down
t4=$(now)
echo "platform-scenario: scenario ran $(awk "BEGIN{printf \"%.1f\", $t3-$t2}") s, platform down in $(awk "BEGIN{printf \"%.1f\", $t4-$t3}") s" >&2
exit "$rc"
