#!/usr/bin/env bash
# Installs playwright-core (pinned in package-lock.json) into
# tests/browser/node_modules (ignored by git), only when the lock changed. The
# browser is Debian's chromium: playwright never downloads one.
set -euo pipefail
cd "$(dirname "$0")"
for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "FAIL: '$tool' is missing; install Debian's nodejs and npm (bash scripts/install-deps.sh)" >&2
    exit 1
  }
done
stamp=node_modules/.trainscope-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f node_modules/.package-lock.json ]; then
  echo "npm_ci: node_modules up to date"
  exit 0
fi
export npm_config_cache="$PWD/.npm-cache"
npm ci --no-audit --no-fund --loglevel=error
echo "$want" > "$stamp"
