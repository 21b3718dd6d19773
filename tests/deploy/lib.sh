# Shared by the tests/deploy scripts: locate the repository and fail clearly
# (never skip) when a tool the test needs is missing.
set -euo pipefail
DEPLOY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$DEPLOY_DIR/../.." && pwd)

need() {  # need TOOL "how to get it"
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "FAIL: '$1' is not installed; $2" >&2
    exit 1
  fi
}
need_kubectl() {
  need kubectl "this test renders the manifests with 'kubectl kustomize' (kubectl >= 1.27 with built-in kustomize 5). kubectl is not a Debian 12 package: install it from https://pkgs.k8s.io (see docs/deploy.md, 'Tests')"
}
need_node() {
  need node "install Debian's nodejs and npm (bash scripts/install-deps.sh)"
  need npm "install Debian's nodejs and npm (bash scripts/install-deps.sh)"
  if [ ! -f "$DEPLOY_DIR/node_modules/.package-lock.json" ]; then
    echo "FAIL: tests/deploy/node_modules is missing; the deploy.npm_ci test installs it (ctest -L deploy runs it first), or run: npm ci --prefix tests/deploy" >&2
    exit 1
  fi
}
need_jsonnet() {  # sets JSONNET and JB: go-jsonnet and jsonnet-bundler
  JSONNET=$(bash "$REPO_ROOT/scripts/install-jsonnet.sh" --print)
  JB=$(bash "$REPO_ROOT/scripts/install-jsonnet.sh" --print-jb)
  if [ ! -x "$JSONNET" ] || [ ! -x "$JB" ]; then
    echo "FAIL: jsonnet or jb is not built; run: bash scripts/install-jsonnet.sh (the deploy.jsonnet_install test does)" >&2
    exit 1
  fi
  export JSONNET JB
}
