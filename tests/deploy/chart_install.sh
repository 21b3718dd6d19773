#!/usr/bin/env bash
# `helm install`, `helm upgrade` and `helm uninstall` of the chart against a
# real kube-apiserver with the Prometheus Operator's CRDs (scripts/platform.sh
# up --operator, built from their Go modules; docs/platform.md): the API
# server validates every object against its real schemas, the CRDs' among
# them. No kubelet runs, so no agent pod starts; what is checked is that
# each value set installs, that the release holds the objects it rendered,
# and that uninstall leaves nothing. Loopback only; the platform goes at exit.
#   bash tests/deploy/chart_install.sh
source "$(dirname "$0")/lib.sh"
need_kubectl
bash "$REPO_ROOT/scripts/install-helm.sh"
helm=$(bash "$REPO_ROOT/scripts/install-helm.sh" --print)
chart=$REPO_ROOT/daemonset/chart/trainscope

tmp=$(mktemp -d /tmp/trainscope-chart-install.XXXXXX)
cleanup() {
  local rc=$?
  bash "$REPO_ROOT/scripts/platform.sh" down --dir "$tmp/platform" >/dev/null 2>&1 || true
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bash "$REPO_ROOT/scripts/platform.sh" up --dir "$tmp/platform" --operator
export KUBECONFIG=$tmp/platform/kubeconfig
# helm's own state (repositories, cache) stays in the temp dir.
export HELM_CACHE_HOME=$tmp/helm/cache HELM_CONFIG_HOME=$tmp/helm/config HELM_DATA_HOME=$tmp/helm/data
kubectl wait --for condition=established --timeout=60s crd/servicemonitors.monitoring.coreos.com \
  crd/podmonitors.monitoring.coreos.com crd/prometheusrules.monitoring.coreos.com >/dev/null

fail() { echo "FAIL: $*" >&2; exit 1; }
# The kinds/names of a release's manifest and what the API server holds.
release_objects() {
  "$helm" get manifest trainscope -n trainscope | kubectl get -f - -o name 2>&1 | sort
}

kubectl create namespace trainscope >/dev/null
kubectl label namespace trainscope pod-security.kubernetes.io/enforce=privileged >/dev/null

step() {  # step WHAT helm-args...: install or upgrade, then compare
  local what=$1; shift
  "$helm" upgrade --install trainscope "$chart" -n trainscope "$@" >"$tmp/helm.log" 2>&1 ||
    { cat "$tmp/helm.log" >&2; fail "$what: helm upgrade --install"; }
  local want got
  want=$("$helm" template trainscope "$chart" -n trainscope "$@" | grep -c '^kind: ')
  got=$(release_objects)
  grep -q 'NotFound\|error' <<<"$got" && fail "$what: the API server lacks objects of the release: $got"
  [ "$(wc -l <<<"$got")" = "$want" ] || fail "$what: $want objects rendered, the API server holds: $got"
  echo "ok: $what: $want objects installed"
}

step "defaults"
step "kube-prometheus-stack values" -f "$chart/ci/kube-prometheus-stack-values.yaml"
step "secured (kube-rbac-proxy, NetworkPolicy, kube-prometheus Role), PodMonitor" \
  --set kubeRbacProxy.enabled=true,networkPolicy.enabled=true,kubePrometheus.rbac=true,podMonitor.enabled=true
step "web config made, pcap, flags" --set webConfig.enabled=true,webConfig.create=true,webConfig.bearerToken=t \
  --set agent.flows=pcap,agent.flags.interval=2,agent.flags.log-format=json

# The API server holds the DaemonSet of the last upgrade (pcap: hostNetwork).
net=$(kubectl -n trainscope get daemonset trainscope-agent -o jsonpath='{.spec.template.spec.hostNetwork}')
[ "$net" = true ] || fail "upgrade: the DaemonSet has hostNetwork $net, want true"

"$helm" uninstall trainscope -n trainscope >/dev/null || fail "helm uninstall"
left=$(kubectl get daemonsets,services,serviceaccounts,secrets,configmaps,servicemonitors,podmonitors,prometheusrules,networkpolicies,roles,rolebindings \
  -n trainscope -l app.kubernetes.io/instance=trainscope -o name 2>&1)
left+=$(kubectl get clusterroles,clusterrolebindings,priorityclasses -l app.kubernetes.io/instance=trainscope -o name 2>&1)
[ -z "$left" ] || fail "helm uninstall left: $left"
echo "ok: helm uninstall left nothing"
echo "chart_install: the chart installs, upgrades and uninstalls on kube-apiserver with the Operator's CRDs"
