#!/usr/bin/env bash
# clang-tidy with the project's .clang-tidy over the sources of the agent,
# the collectors and the shared libraries (core/, kube/, exposition/), from
# the build's compile_commands.json: fails naming each finding. Tests, benchmarks and
# the BPF programs are left out (their own build checks them). Skips (77)
# without clang-tidy or a compilation database.
#   tests/lint/clang_tidy.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
command -v clang-tidy >/dev/null ||
  { echo "clang_tidy: clang-tidy not found (scripts/install-deps.sh)"; exit 77; }
[ -f "$build/compile_commands.json" ] ||
  { echo "clang_tidy: no $build/compile_commands.json (configure first)"; exit 77; }
mapfile -t files < <(git ls-files 'agent/*.cc' 'collectors/*.cc' 'kube/*.cc' 'core/*.cc' 'exposition/*.cc' |
  grep -v '\.bpf\.c$')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Four files per clang-tidy, as many at once as there are CPUs, niced: in CI
# it runs beside the scenarios, whose step timing must not wait for a lint.
# -w: the compiler's own warnings are the build's job (-Werror in CI);
# only the checks of .clang-tidy are this test's.
if ! printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -n 4 nice -n 10 clang-tidy -p "$build" --quiet --extra-arg=-w \
    >"$log" 2>&1; then
  grep -E 'warning:|error:' "$log" | sort -u >&2 || cat "$log" >&2
  echo "clang_tidy: findings above (checks: .clang-tidy)" >&2
  exit 1
fi
echo "clang_tidy: ${#files[@]} files clean"
