#!/usr/bin/env bash
# kubectl kustomize renders the base and every overlay, with the expected
# objects, into $OUT_DIR (default: a temp dir) as <name>.yaml.
source "$(dirname "$0")/lib.sh"
need_kubectl
out=${1:-$(mktemp -d)}
mkdir -p "$out"
fail=0
for variant in daemonset daemonset/overlays/pcap daemonset/overlays/sys-admin; do
  name=$(basename "$variant")
  if ! kubectl kustomize "$REPO_ROOT/$variant" > "$out/$name.yaml"; then
    echo "FAIL: kubectl kustomize $variant" >&2; fail=1; continue
  fi
  kinds=$(grep -E '^kind: ' "$out/$name.yaml" | awk '{print $2}' | sort | tr '\n' ' ')
  want="ClusterRole ClusterRoleBinding DaemonSet Namespace PriorityClass PrometheusRule Service ServiceAccount ServiceMonitor "
  if [ "$kinds" != "$want" ]; then
    echo "FAIL: $variant renders [$kinds], want [$want]" >&2; fail=1
  else
    echo "ok: $variant renders $(grep -c '^kind: ' "$out/$name.yaml") objects"
  fi
done
exit $fail
