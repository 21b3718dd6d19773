#!/usr/bin/env bash
# scripts/test.sh's last lines name every failed test with the failures its
# last try reported and the end of its output (failed_tests): checked here
# against a ctest log written by hand in ctest's format, with a test that
# failed twice (its failure far from the end), one that passed, and one that
# failed without a scenario verdict.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/Testing/Temporary"
{
  printf '1/3 Testing: scenario.a\n1/3 Test: scenario.a\nOutput:\n'
  printf -- '----------\nfirst try of a\n<end of output>\n'
  printf '2/3 Testing: lint.ok\n2/3 Test: lint.ok\nOutput:\n'
  printf -- '----------\nall fine\n<end of output>\n'
  printf '1/3 Testing: scenario.a\n1/3 Test: scenario.a\nOutput:\n----------\n'
  printf 'x.cc:12: Failure\nExpected: true\nthe reason\n'
  for i in $(seq 1 40); do echo "a line $i"; done
  printf '<end of output>\n'
  printf '3/3 Testing: whatif.x\n3/3 Test: whatif.x\nOutput:\n----------\n'
  printf 'what-if x: error +31%% (tolerance 25%%): FAIL\n<end of output>\n'
} >"$tmp/Testing/Temporary/LastTest.log"
printf '1:scenario.a\n3:whatif.x\n' >"$tmp/Testing/Temporary/LastTestsFailed.log"

# shellcheck source=/dev/null
source <(sed -n '/^failed_tests()/,/^}/p' scripts/test.sh)
out=$(build_dir=$tmp failed_tests)
fail=0
expect() {  # pattern (grep's basic regex), why it matters
  if ! grep -q -- "$1" <<<"$out"; then
    echo "failed_tests_summary: $2"
    fail=1
  fi
}
expect "--- scenario.a," "scenario.a is not named"
expect "a line 40" "scenario.a's last line is missing"
expect "a line 26\$" "scenario.a's 15th line from the end is missing"
expect "x.cc:12: Failure" "scenario.a's failure, far from the end, is missing"
expect "the reason" "the lines after scenario.a's failure are missing"
expect "error +31% (tolerance 25%): FAIL" "whatif.x's reason is missing"
if grep -q -e "a line 5\$" -e "a line 25\$" -e "first try of a" -e "all fine" <<<"$out"; then
  echo "failed_tests_summary: more than a failure's 6 lines and the last 15 lines of the last try, or a passed test"
  fail=1
fi
[ "$fail" -eq 0 ] || { echo "$out"; exit 1; }
echo "failed_tests_summary: ok"
