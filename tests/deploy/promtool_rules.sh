#!/usr/bin/env bash
# promtool check rules + promtool test rules (unit tests, firing and not
# firing, for every alert), and every alert of alerts.yaml has a test.
source "$(dirname "$0")/lib.sh"
need promtool "install Debian's prometheus package (bash scripts/install-deps.sh)"
cd "$REPO_ROOT/dashboards"
case "${1:-all}" in
  check) promtool check rules alerts.yaml ;;
  test)
    promtool test rules alerts_test.yaml goodput_rules_test.yaml
    missing=0
    alerts=$(python3 -c 'import yaml
for g in yaml.safe_load(open("alerts.yaml"))["groups"]:
    for r in g["rules"]:
        if "alert" in r: print(r["alert"])')
    [ -n "$alerts" ] || { echo "FAIL: no alert in alerts.yaml" >&2; exit 1; }
    for a in $alerts; do
      if ! grep -qE "alertname: $a\$" alerts_test.yaml; then
        echo "FAIL: alert $a has no unit test in dashboards/alerts_test.yaml" >&2; missing=1
      fi
      if ! grep -qE "^\s*exp_alerts: \[\]" <(awk "/alertname: $a\$/{getline; getline; print}" alerts_test.yaml); then
        echo "FAIL: alert $a has no not-firing case (exp_alerts: []) in dashboards/alerts_test.yaml" >&2; missing=1
      fi
    done
    [ $missing -eq 0 ] && echo "every alert has a firing and a not-firing test"
    exit $missing ;;
  *) echo "usage: $0 check|test" >&2; exit 2 ;;
esac
