#!/usr/bin/env bash
# Builds the real helm the chart's tests run (daemonset/chart/trainscope,
# docs/deploy.md), pinned, from its published Go module into the tool cache
# outside the work tree ($TRAINSCOPE_CACHE_DIR, default /var/cache/trainscope),
# like scripts/install-platform.sh builds etcd and kube-apiserver. Already
# built: nothing to do, no network needed.
#
#   bash scripts/install-helm.sh            # build it unless it is there
#   bash scripts/install-helm.sh --print    # its path
#
# Helm's go.mod has no replace directives, so `go install MODULE/cmd/helm@V`
# builds it as released; the link-time stamps are the ones helm's Makefile
# sets. Exit 1 with the reason when Go or the module proxy is missing.
set -euo pipefail

module=helm.sh/helm/v3
version=v3.22.0
out=${TRAINSCOPE_CACHE_DIR:-/var/cache/trainscope}/helm/helm-$version/helm

if [ "${1:-}" = "--print" ]; then
  echo "$out"
  exit 0
fi
[ -x "$out" ] && exit 0

command -v go >/dev/null || {
  echo "[install-helm] ERROR: go is not installed (Debian: golang-go)" >&2
  exit 1
}

# Helm stamps its version, and the Kubernetes version `helm template` and
# `helm lint` assume (.Capabilities.KubeVersion, the deprecated-API check),
# which its Makefile takes from the client-go it links: v0.X.Y is 1.X.
ldflags() {
  local gomod minor v=$module/internal/version
  gomod=$(go mod download -json "$module@$version" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["GoMod"])')
  minor=$(go mod edit -json "$gomod" | python3 -c '
import json, sys
print(next(r["Version"].split(".")[1] for r in json.load(sys.stdin)["Require"]
           if r["Path"] == "k8s.io/client-go"))')
  echo "-X $v.version=$version -X $v.metadata= -X $v.gitTreeState=clean" \
    "-X $module/pkg/lint/rules.k8sVersionMajor=1 -X $module/pkg/lint/rules.k8sVersionMinor=$minor" \
    "-X $module/pkg/chartutil.k8sVersionMajor=1 -X $module/pkg/chartutil.k8sVersionMinor=$minor"
}

work=$(mktemp -d /tmp/trainscope-build-helm.XXXXXX)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
echo "[install-helm] building helm $version from $module"
flags=$(ldflags) && GOBIN=$work go install -trimpath -ldflags "$flags" "$module/cmd/helm@$version" || {
  echo "[install-helm] ERROR: building helm $version failed (module proxy unreachable?)" >&2
  exit 1
}
mkdir -p "$(dirname "$out")"
mv "$work/helm" "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "[install-helm] helm $version built in $(($(date +%s) - start)) s: $out ($(du -h "$out" | cut -f1))"
