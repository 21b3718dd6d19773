#!/usr/bin/env bash
# Privileged: the `trainscope` CLI on a machine without libpcap. In a mount
# namespace of its own (gone with the process, whatever happens) every
# libpcap file is hidden behind /dev/null: the CLI still starts and every
# command but `flows --read` works; `flows --read` fails with a message
# naming what to install, not a loader error at start-up.
#   tests/integration/cli_without_libpcap.sh PATH_TO_TRAINSCOPE
set -euo pipefail
cli=${1:?usage: cli_without_libpcap.sh PATH_TO_TRAINSCOPE}
[ "$(id -u)" -eq 0 ] || { echo "cli_without_libpcap: needs root"; exit 77; }
if [ "${TRAINSCOPE_IN_NAMESPACE:-}" != 1 ]; then
  exec unshare --mount env TRAINSCOPE_IN_NAMESPACE=1 bash "$0" "$cli"
fi
mount --make-rprivate /
hidden=0
while read -r path; do
  real=$(readlink -f "$path")
  mount --bind /dev/null "$real"
  hidden=$((hidden + 1))
done < <(ldconfig -p | sed -n 's/.*libpcap\.so.* => //p' | sort -u)
[ "$hidden" -gt 0 ] || { echo "cli_without_libpcap: no libpcap to hide"; exit 1; }

"$cli" --help >/dev/null
"$cli" report --help >/dev/null
"$cli" profile --help >/dev/null
capture=$(mktemp)
trap 'rm -f "$capture"' EXIT
rc=0
out=$("$cli" flows --read "$capture" 2>&1) || rc=$?
echo "$out"
[ "$rc" -ne 0 ] || { echo "cli_without_libpcap: flows --read succeeded"; exit 1; }
grep -q "libpcap is needed to read capture files" <<<"$out" ||
  { echo "cli_without_libpcap: no clear message"; exit 1; }
echo "cli_without_libpcap: $hidden libpcap file(s) hidden; the CLI ran, flows --read said why not"
