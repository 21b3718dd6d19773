#!/usr/bin/env bash
# `helm lint --strict` and `helm template` of daemonset/chart/trainscope with
# the real helm (scripts/install-helm.sh builds it into the tool cache once),
# with the default values and with each ci/*-values.yaml, as chart-testing
# does. --strict turns lint's warnings (a template referring to a value
# that does not exist, a missing icon, ...) into failures.
source "$(dirname "$0")/lib.sh"
bash "$REPO_ROOT/scripts/install-helm.sh"
helm=$(bash "$REPO_ROOT/scripts/install-helm.sh" --print)
chart=$REPO_ROOT/daemonset/chart/trainscope
echo "helm $("$helm" version --short)"
fail=0
for values in "" "$chart"/ci/*-values.yaml; do
  args=()
  if [ -n "$values" ]; then args=(-f "$values"); fi
  what=${values:+$(basename "$values")}
  if ! "$helm" lint --strict "$chart" "${args[@]}"; then
    echo "FAIL: helm lint --strict ${what:-default values}" >&2; fail=1
  fi
  if ! objects=$("$helm" template trainscope "$chart" --namespace trainscope "${args[@]}" | grep -c '^kind: '); then
    echo "FAIL: helm template ${what:-default values}" >&2; fail=1
  else
    echo "ok: helm template ${what:-default values}: $objects objects"
  fi
done
exit $fail
