#!/usr/bin/env bash
# The shipped manifests under the real Prometheus Operator (docs/deploy.md,
# "Labels under the Prometheus Operator"; docs/platform.md): the platform's
# etcd and kube-apiserver with the Operator (scripts/platform.sh --operator),
# an overlay applied to it for real, the Prometheus object of that stack,
# and a real agent on the fixture host v2-systemd as node-a, listening on
# the pod IP 198.18.0.2:9476. The Operator's generated configuration (the
# Secret prometheus-<name>) and rule ConfigMap are loaded into a real
# Prometheus (built by scripts/install-platform.sh: Debian's has no
# Kubernetes discovery) that discovers the agent through the API server and
# scrapes it; tests/deploy/operator_real.mjs checks the series keep the agent's
# namespace/pod/container (no exported_*), that the rules load, and that
# the Operator accepted the PrometheusRule (and rejected a broken copy).
#
# Everything runs in network and PID namespaces of its own (unshare; a
# user namespace too when not root): its loopback is up and carries
# 198.18.0.2, since the API server refuses loopback addresses in Endpoints.
# Every process and file goes on every exit path.
#
#   bash tests/deploy/operator_real.sh --agent build/agent/trainscope-agent \
#        --stack kube-prometheus|kube-prometheus-stack [--components podmonitor]
source "$(dirname "$0")/lib.sh"

agent=$REPO_ROOT/build/agent/trainscope-agent
stack=kube-prometheus
components=
orig_args=("$@")
while [ $# -gt 0 ]; do
  case "$1" in
    --agent) agent=$2; shift 2 ;;
    --stack) stack=$2; shift 2 ;;
    --components) components=$2; shift 2 ;;
    *) echo "usage: $0 [--agent BIN] [--stack kube-prometheus|kube-prometheus-stack] [--components LIST]" >&2; exit 2 ;;
  esac
done
need promtool "install Debian's prometheus package (bash scripts/install-deps.sh)"
need unshare "install util-linux"
need ip "install iproute2"
need curl "install curl (bash scripts/install-deps.sh)"
need_kubectl
need_node
[ -x "$agent" ] || { echo "FAIL: $agent is not built (cmake --build build --target trainscope-agent)" >&2; exit 1; }

if [ -z "${TRAINSCOPE_OPERATOR_NETNS:-}" ]; then
  # Outside the namespace: the tools may need the module proxy once.
  bash "$REPO_ROOT/scripts/install-platform.sh" >&2
  # A PID namespace too, whose first process is this script again: when
  # it dies, however it dies (a ctest timeout kills unshare, which then
  # sends the script SIGTERM), the kernel ends every process left in it.
  netns=(--net --pid --fork --mount-proc --kill-child=SIGTERM)
  [ "$(id -u)" = 0 ] || netns+=(--map-root-user)
  TRAINSCOPE_OPERATOR_NETNS=1 exec unshare "${netns[@]}" bash "$0" "${orig_args[@]}"
fi

pod_ip=198.18.0.2
node=node-a
ip link set lo up
ip addr add "$pod_ip/32" dev lo

tmp=$(mktemp -d /tmp/trainscope-operator-real.XXXXXX)
pids=()
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ $rc -ne 0 ]; then
    for f in "$tmp"/*.log "$tmp"/platform/prometheus-operator.log; do
      [ -f "$f" ] && { echo "--- $(basename "$f") (tail)"; tail -15 "$f"; }
    done
  fi
  bash "$REPO_ROOT/scripts/platform.sh" down --dir "$tmp/platform" || true
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
SECONDS=0

bash "$REPO_ROOT/scripts/platform.sh" up --dir "$tmp/platform" --operator
export KUBECONFIG=$tmp/platform/kubeconfig
echo "operator-real [${SECONDS}s] platform and Operator up"

# The overlay as a user applies it (server-side, as docs/deploy.md says).
# With --components: the base with the overlay's components and those, in
# the order docs/deploy.md gives (the extra ones before the stack's, whose
# label patch must see their objects).
kdir=$tmp/kustomization
mkdir -p "$kdir"
rel=$(realpath --relative-to="$kdir" "$REPO_ROOT/daemonset")
overlay_components=$(sed -n 's|^  - \.\./\.\./components/||p' "$REPO_ROOT/daemonset/overlays/$stack/kustomization.yaml")
{
  echo "apiVersion: kustomize.config.k8s.io/v1beta1"
  echo "kind: Kustomization"
  if [ -z "$components" ]; then
    echo "resources: [$rel/overlays/$stack]"
  else
    echo "resources: [$rel/base]"
    echo "components:"
    echo "  - $rel/components/namespace"
    for c in ${components//,/ } $overlay_components; do
      [ "$c" = namespace ] || echo "  - $rel/components/$c"
    done
  fi
} >"$kdir/kustomization.yaml"
kubectl kustomize "$kdir" >"$tmp/manifests.yaml"
kubectl apply --server-side -f "$tmp/manifests.yaml" >"$tmp/apply.log"
echo "operator-real [${SECONDS}s] applied $(grep -c . "$tmp/apply.log") objects:" $(grep -o '[a-z-]*/[a-z-]*]*$' "$kdir/kustomization.yaml" | tr -d ']')

# Prometheus built by install-platform.sh: Debian's has no kubernetes_sd.
prometheus=$(bash "$REPO_ROOT/scripts/install-platform.sh" --print | awk '$1 == "prometheus" {print $2}')
prom_version=v$("$prometheus" --version 2>&1 | sed -n 's/^prometheus, version \([0-9.]*\).*/\1/p')
mkdir -p "$tmp/out"
node "$DEPLOY_DIR/operator_real.mjs" prepare --kubeconfig "$KUBECONFIG" --env "$tmp/platform/env" \
  --stack "$stack" --manifests "$tmp/manifests.yaml" --node "$node" --pod-ip "$pod_ip" \
  --prometheus-version "$prom_version" --out "$tmp/out"
promtool check rules "$tmp"/out/rules/*.yaml >"$tmp/promtool.log" 2>&1 || { cat "$tmp/promtool.log"; exit 1; }
echo "operator-real ok   promtool check rules passes on the Operator's rule files"

fixture=$REPO_ROOT/tests/fixtures/hosts/v2-systemd
cp -a "$fixture" "$tmp/host"
"$agent" --listen "$pod_ip:9476" --interval 0.5 --node-name "$node" \
  --discovery file --pod-file "$tmp/host/pods.json" \
  --host-proc "$tmp/host/proc" --host-sys "$tmp/host/sys" \
  --cgroup-root "$tmp/host/sys/fs/cgroup" --flows off >"$tmp/agent.log" 2>&1 &
pids+=($!)
"$prometheus" --config.file="$tmp/out/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address=127.0.0.1:9090 --log.level=warn >"$tmp/prometheus.log" 2>&1 &
pids+=($!)

node "$DEPLOY_DIR/operator_real.mjs" check --prometheus http://127.0.0.1:9090 \
  --agent "http://$pod_ip:9476" --node "$node" --manifests "$tmp/manifests.yaml"
echo "operator-real [${SECONDS}s] done"
