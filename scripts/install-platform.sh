#!/usr/bin/env bash
# Builds the real platform parts the tests run (docs/platform.md): etcd,
# kube-apiserver, the Prometheus Operator (with its CRDs), Prometheus
# (Debian's is built without Kubernetes discovery) and Thanos, pinned, from their
# published Go modules, into the tool cache outside the work tree
# ($TRAINSCOPE_CACHE_DIR, default /var/cache/trainscope), one folder per
# tool and version. A tool already there is not built again, so a second
# run builds nothing and needs no network.
#
#   bash scripts/install-platform.sh            # every tool
#   bash scripts/install-platform.sh --print    # where each one is
#
# Each tool is built in a throwaway module that requires the tool's module
# at its pinned version: `go install MODULE@VERSION` refuses them (their
# go.mod files hold replace directives for their own monorepos), and
# Kubernetes requires its staging modules at v0.0.0, so each is pinned to
# the matching published v0.X.Y. Exit 1 with the reason when Go or the
# module proxy is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

cache=${TRAINSCOPE_CACHE_DIR:-/var/cache/trainscope}/platform

# name  module  version  package
tools=(
  "etcd go.etcd.io/etcd/server/v3 v3.6.16 go.etcd.io/etcd/server/v3"
  "kube-apiserver k8s.io/kubernetes v1.34.4 k8s.io/kubernetes/cmd/kube-apiserver"
  "prometheus-operator github.com/prometheus-operator/prometheus-operator v0.85.0 github.com/prometheus-operator/prometheus-operator/cmd/operator"
  "prometheus github.com/prometheus/prometheus v0.305.0 github.com/prometheus/prometheus/cmd/prometheus"
  # Thanos Query and sidecars in front of two Prometheus servers: the
  # cluster view of several clusters (docs/performance.md). v0.42.0: the
  # later v0.42.x require Go 1.26.10, newer than the Go on these machines.
  "thanos github.com/thanos-io/thanos v0.42.0 github.com/thanos-io/thanos/cmd/thanos"
)

tool_path() { echo "$cache/$1-$3/$1"; }

# The Operator's CRDs, copied from its module (example/prometheus-operator-crd)
# next to the binary, so that the platform needs neither the module cache
# nor the network to install them.
crd_dir() { echo "$(dirname "$(tool_path "$@")")/crds"; }

if [ "${1:-}" = "--print" ]; then
  for t in "${tools[@]}"; do
    read -r name module version _ <<<"$t"
    echo "$name $(tool_path "$name" "$module" "$version")"
    if [ "$name" = prometheus-operator ]; then
      echo "prometheus-operator-crds $(crd_dir "$name" "$module" "$version")"
    fi
  done
  exit 0
fi

command -v go >/dev/null || {
  echo "[install-platform] ERROR: go is not installed (Debian: golang-go)" >&2
  exit 1
}

# Kubernetes' go.mod replaces each k8s.io/X it publishes from staging/
# with a local path; outside its repository they are the published
# k8s.io/X v0.MINOR.PATCH of the same release.
pin_staging_modules() {
  local module=$1 version=$2 gomod
  gomod=$(go mod download -json "$module@$version" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["GoMod"])')
  go mod edit -json "$gomod" | python3 -c '
import json, sys
staging = "v0." + sys.argv[1].split(".", 1)[1]
for r in json.load(sys.stdin).get("Replace") or []:
    old, new = r["Old"]["Path"], r["New"]["Path"]
    if new.startswith("./staging/"):
        print(f"-replace={old}={old}@{staging}")
' "$version" | xargs -r go mod edit
}

# A module's replace directives that name another module version (not a
# local path) hold in its own build; a dependency's are ignored, so the
# throwaway module repeats them (Prometheus pins fsnotify so).
copy_remote_replaces() {
  local module=$1 version=$2 gomod
  gomod=$(go mod download -json "$module@$version" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["GoMod"])')
  go mod edit -json "$gomod" | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("Replace") or []:
    old, new = r["Old"], r["New"]
    if "Version" in new:
        at = "@" + old["Version"] if "Version" in old else ""
        print("-replace=%s%s=%s@%s" % (old["Path"], at, new["Path"], new["Version"]))
' | xargs -r go mod edit
}

# The version the binary reports (kubectl and clients read the server's):
# Kubernetes and the Prometheus projects stamp it at link time, as their
# own builds do (Prometheus's module v0.X.Y is release 3.X.Y: its VERSION
# file says which).
version_ldflags() {
  local module=$1 version=$2 minor
  case $module in
    github.com/prometheus-operator/prometheus-operator | github.com/prometheus/prometheus | github.com/thanos-io/thanos)
      [ "$module" = github.com/prometheus/prometheus ] &&
        version=$(cat "$(go list -m -f '{{.Dir}}' "$module")/VERSION")
      echo "-X github.com/prometheus/common/version.Version=${version#v}" \
        "-X github.com/prometheus/common/version.Branch=v${version#v}"
      return 0
      ;;
  esac
  [ "$module" = k8s.io/kubernetes ] || return 0
  minor=$(echo "$version" | cut -d. -f2)
  echo "-X k8s.io/component-base/version.gitVersion=$version" \
    "-X k8s.io/component-base/version.gitMajor=1" \
    "-X k8s.io/component-base/version.gitMinor=$minor" \
    "-X k8s.io/component-base/version.gitTreeState=clean"
}

# Build tags a project's release build sets (its .promu.yml): Thanos's
# StoreAPI marshals Prometheus label sets as slices, which only the
# slicelabels layout gives (without it a sidecar panics on its first
# Series call).
build_tags() {
  case $1 in
    github.com/thanos-io/thanos) echo "netgo,slicelabels" ;;
  esac
}

build_tool() {
  local name=$1 module=$2 version=$3 package=$4
  local out dir work start
  out=$(tool_path "$name" "$module" "$version")
  if [ -x "$out" ] && { [ "$name" != prometheus-operator ] || [ -d "$(crd_dir "$name" "$module" "$version")" ]; }; then
    return 0
  fi
  dir=$(dirname "$out")
  work=$(mktemp -d /tmp/trainscope-build-"$name".XXXXXX)
  start=$(date +%s)
  echo "[install-platform] building $name $version from $module"
  (
    cd "$work"
    go mod init "trainscope.local/build-$name" >/dev/null 2>&1
    go mod edit -require="$module@$version"
    # (set -e does not hold left of the `||` below: each step says so.)
    if [ "$module" = k8s.io/kubernetes ]; then
      pin_staging_modules "$module" "$version" || exit 1
    else
      copy_remote_replaces "$module" "$version" || exit 1
    fi
    # -mod=mod for every go command here: version_ldflags and the CRD copy
    # resolve the module too.
    export GOFLAGS=-mod=mod
    go build -trimpath -tags "$(build_tags "$module")" \
      -ldflags "$(version_ldflags "$module" "$version")" \
      -o "$work/$name" "$package" || exit 1
    if [ "$name" = prometheus-operator ]; then
      cp -r "$(go list -m -f '{{.Dir}}' "$module")/example/prometheus-operator-crd" "$work/crds" &&
        chmod -R u+w "$work/crds" || exit 1
    fi
  ) || {
    rm -rf "$work"
    echo "[install-platform] ERROR: building $name $version failed (module proxy unreachable?)" >&2
    return 1
  }
  mkdir -p "$dir"
  if [ -d "$work/crds" ]; then
    rm -rf "$dir/crds"
    mv "$work/crds" "$dir/crds"
  fi
  mv "$work/$name" "$out.tmp.$$"
  mv "$out.tmp.$$" "$out"
  rm -rf "$work"
  echo "[install-platform] $name $version built in $(($(date +%s) - start)) s: $out ($(du -h "$out" | cut -f1))"
}

for t in "${tools[@]}"; do
  # shellcheck disable=SC2086
  build_tool $t
done
