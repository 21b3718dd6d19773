#!/usr/bin/env bash
# Installs the real training frameworks the realfw scenarios run
# (bench/workloads/requirements.txt) into a venv in the tool cache outside
# the work tree ($TRAINSCOPE_CACHE_DIR, default /var/cache/trainscope),
# keyed by the requirements' hash, and points .venv-workloads/ at the
# repository root to it: a fresh clone (CI) finds it there instead of
# downloading PyPI's torch again (a CUDA build: 6.2 GB, 147 s here).
# TRAINSCOPE_WORKLOADS_VENV names a venv to use instead, without the cache.
# Idempotent: a venv whose stamp matches the requirements is kept as is (no
# network needed). The venv is built beside its final path and renamed
# when complete, so a failed or interrupted install never leaves a half
# venv behind: the realfw tests then skip, saying the venv is absent.
#
# Exit codes: 0 installed or already up to date; 1 cannot install (offline,
# no python3 venv, package index unreachable) with the reason printed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
req=bench/workloads/requirements.txt
python=${PYTHON:-python3}
want=$(sha256sum "$req" | cut -d' ' -f1)
link=
if [ -n "${TRAINSCOPE_WORKLOADS_VENV:-}" ]; then
  venv=$TRAINSCOPE_WORKLOADS_VENV
else
  venv=${TRAINSCOPE_CACHE_DIR:-/var/cache/trainscope}/venv-workloads-${want:0:16}
  link=$repo/.venv-workloads
  mkdir -p "$(dirname "$venv")"
fi
stamp="$venv/.trainscope-requirements.sha256"

up_to_date() {
  [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$venv/bin/python" ]]
}
point_link() {
  # The repository's .venv-workloads (what the scenarios run) is the cached
  # venv; an older real directory there is replaced.
  [ -z "$link" ] && return 0
  [ -L "$link" ] || rm -rf "$link"
  ln -sfn "$venv" "$link"
}
if up_to_date; then
  point_link
  echo "[install-workloads] $venv is up to date"
  exit 0
fi

fail() {
  echo "[install-workloads] ERROR: $*" >&2
  echo "[install-workloads] the realfw scenario tests will be skipped (venv absent)." >&2
  echo "[install-workloads] retry with network access: bash scripts/install-workloads.sh" >&2
  rm -rf "$tmp"
  exit 1
}

tmp="$venv.tmp.$$"
rm -rf "$tmp"
start=$(date +%s)
echo "[install-workloads] creating $venv from $req"
"$python" -m venv "$tmp" || fail "'$python -m venv' failed (is python3-venv installed?)"
"$tmp/bin/pip" install --quiet --disable-pip-version-check --no-input \
  --timeout 60 --retries 2 -r "$req" ||
  fail "pip could not install $req (offline or index unreachable?)"
"$tmp/bin/python" -c 'import tensorflow, torch' ||
  fail "the installed frameworks do not import"
echo "$want" >"$tmp/.trainscope-requirements.sha256"
# The venv's scripts name their own path: rebuild, not move, would be
# needed for console scripts; the workloads only run bin/python, whose
# pyvenv.cfg does not name the venv's path, so a rename is safe.
rm -rf "$venv"
mv "$tmp" "$venv"
point_link
echo "[install-workloads] done in $(($(date +%s) - start)) s: $("$venv/bin/python" -c 'import tensorflow as tf, torch; print("tensorflow", tf.__version__, "torch", torch.__version__)' 2>/dev/null)"
