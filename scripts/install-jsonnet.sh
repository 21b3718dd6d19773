#!/usr/bin/env bash
# Builds the real jsonnet tools the mixin's tests run (dashboards/mixin,
# docs/dashboards.md), pinned, from their published Go modules into the tool
# cache outside the work tree ($TRAINSCOPE_CACHE_DIR, default
# /var/cache/trainscope), as scripts/install-helm.sh builds helm:
#   jsonnet, jsonnetfmt  github.com/google/go-jsonnet
#   jb                   github.com/jsonnet-bundler/jsonnet-bundler
# Already built: nothing to do, no network needed.
#
#   bash scripts/install-jsonnet.sh            # build them unless there
#   bash scripts/install-jsonnet.sh --print    # the path of jsonnet
#   bash scripts/install-jsonnet.sh --print-jb # the path of jb
#
# Exit 1 with the reason when Go or the module proxy is missing.
set -euo pipefail

go_jsonnet=v0.22.0
jb_version=v0.6.0
dir=${TRAINSCOPE_CACHE_DIR:-/var/cache/trainscope}/jsonnet/go-jsonnet-$go_jsonnet-jb-$jb_version

case "${1:-}" in
  --print) echo "$dir/jsonnet"; exit 0 ;;
  --print-jb) echo "$dir/jb"; exit 0 ;;
esac
[ -x "$dir/jsonnet" ] && [ -x "$dir/jsonnetfmt" ] && [ -x "$dir/jb" ] && exit 0

command -v go >/dev/null || {
  echo "[install-jsonnet] ERROR: go is not installed (Debian: golang-go)" >&2
  exit 1
}
work=$(mktemp -d /tmp/trainscope-build-jsonnet.XXXXXX)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
fail() {
  echo "[install-jsonnet] ERROR: building $1 failed (module proxy unreachable?)" >&2
  exit 1
}
echo "[install-jsonnet] building go-jsonnet $go_jsonnet and jb $jb_version"
GOBIN=$work go install -trimpath \
  "github.com/google/go-jsonnet/cmd/jsonnet@$go_jsonnet" \
  "github.com/google/go-jsonnet/cmd/jsonnetfmt@$go_jsonnet" || fail go-jsonnet
# `go install jb@version` asks the proxy for the module's version list (to
# report a deprecation), which this proxy refuses for jsonnet-bundler; the
# module itself downloads, so it is built from its directory in the module
# cache, with the version stamp its release sets.
jb_module=github.com/jsonnet-bundler/jsonnet-bundler
jb_dir=$(go mod download -json "$jb_module@$jb_version" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])') || fail jb
(cd "$jb_dir" && GOFLAGS=-mod=mod go build -trimpath \
  -ldflags "-X main.Version=$jb_version" -o "$work/jb" ./cmd/jb) || fail jb
mkdir -p "$(dirname "$dir")"
rm -rf "$dir.tmp.$$"
mv "$work" "$dir.tmp.$$"
chmod 755 "$dir.tmp.$$"
rm -rf "$dir"
mv "$dir.tmp.$$" "$dir"
trap - EXIT
echo "[install-jsonnet] built in $(($(date +%s) - start)) s: $dir"
