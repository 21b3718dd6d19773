#!/usr/bin/env bash
# Installs the pinned npm packages of tests/deploy (package-lock.json) into
# tests/deploy/node_modules (ignored by git), only when the lock file changed.
source "$(dirname "$0")/lib.sh"
need node "install Debian's nodejs and npm (bash scripts/install-deps.sh)"
need npm "install Debian's nodejs and npm (bash scripts/install-deps.sh)"
cd "$DEPLOY_DIR"
stamp=node_modules/.trainscope-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f node_modules/.package-lock.json ]; then
  echo "npm_ci: node_modules up to date"
  exit 0
fi
export npm_config_cache="$DEPLOY_DIR/.npm-cache"
npm ci --no-audit --no-fund --loglevel=error
echo "$want" > "$stamp"
echo "npm_ci: installed $(ls node_modules | wc -l) packages"
