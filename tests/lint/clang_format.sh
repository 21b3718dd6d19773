#!/usr/bin/env bash
# Fails when a tracked C/C++ file is not formatted as .clang-format (Google
# style) says, naming the files; `clang-format -i FILE` fixes one. Fixture
# trees (tests/fixtures) are data, not code. Skips (77) outside a git
# checkout or without clang-format.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v clang-format >/dev/null ||
  { echo "clang_format: clang-format not found (scripts/install-deps.sh)"; exit 77; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  { echo "clang_format: not a git checkout"; exit 77; }
mapfile -t files < <(git ls-files '*.c' '*.cc' '*.h' | grep -v '^tests/fixtures/')
unformatted=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    unformatted+=("$f")
  fi
done
if [ ${#unformatted[@]} -gt 0 ]; then
  printf 'clang_format: not formatted (run clang-format -i on them):\n' >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "clang_format: ${#files[@]} files formatted"
