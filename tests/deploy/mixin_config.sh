#!/usr/bin/env bash
# The mixin settings reach every rule and panel: rendering with another
# selector, cluster label, runbook URL, threshold and `for` (generate.py
# --config --out, the real jsonnet) leaves no trace of the defaults, and the
# result still passes promtool. The shipped files are the rendering with the
# defaults of dashboards/mixin/config.libsonnet (deploy.generated_up_to_date).
source "$(dirname "$0")/lib.sh"
need promtool "install Debian's prometheus package (bash scripts/install-deps.sh)"
need_jsonnet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat > "$out/mine.libsonnet" <<'JSONNET'
{
  _config+:: {
    selector: 'job="ts-agents", env="prod"',
    clusterLabel: 'k8s_cluster',
    runbookURLPattern: 'https://runbooks.example.com/trainscope/%s.md',
    cpuThrottledRatio: 0.4,
    alertFor+: { TrainscopeAgentDown: '10m' },
  },
}
JSONNET
python3 "$REPO_ROOT/dashboards/mixin/generate.py" --config "$out/mine.libsonnet" --out "$out/mixin" >/dev/null
fail=0
no() {  # no PATTERN WHAT: PATTERN must not occur in the rendering
  if grep -rn -- "$1" "$out/mixin" >/dev/null; then
    echo "FAIL: $2: $(grep -rn -- "$1" "$out/mixin" | head -3)" >&2; fail=1
  fi
}
no 'job=\\\?"trainscope-agent' 'the default job selector is left'
no 'by (namespace' 'an aggregation without the cluster label'
no 'on (namespace' 'a vector match without the cluster label'
no 'by (cluster' 'the default cluster label is left'
no 'github.com/trainscope/trainscope/blob/main/docs/runbooks.md' 'the default runbook URL is left'
n_sel=$(grep -o 'job=\\\?"ts-agents\\\?", env=\\\?"prod\\\?"' "$out/mixin/alerts.yaml" | wc -l)
n_cl=$(grep -o 'k8s_cluster' "$out/mixin/alerts.yaml" | wc -l)
[ "$n_sel" -ge 20 ] || { echo "FAIL: the selector appears $n_sel times in alerts.yaml" >&2; fail=1; }
[ "$n_cl" -ge 30 ] || { echo "FAIL: the cluster label appears $n_cl times in alerts.yaml" >&2; fail=1; }
# The rendered rules as JSON, to check single rules whatever the YAML quoting.
python3 - "$out/mixin/alerts.yaml" <<'PY' || fail=1
import sys, yaml
rules = {r.get("alert"): r for g in yaml.safe_load(open(sys.argv[1]))["groups"] for r in g["rules"]}
def expect(ok, what):
    if not ok:
        print("FAIL: " + what, file=sys.stderr)
        sys.exit(1)
down = rules["TrainscopeAgentDown"]
expect(down["annotations"]["runbook_url"] == "https://runbooks.example.com/trainscope/trainscopeagentdown.md",
       "runbookURLPattern not applied")
expect(down["for"] == "10m", "alertFor.TrainscopeAgentDown not applied")
expect("for 10 minutes" in down["annotations"]["description"], "the description does not follow alertFor")
expect(rules["TrainscopeCPUThrottled"]["expr"].strip().endswith(">= 0.4"), "cpuThrottledRatio not applied")
expect(rules["TrainscopeCollectorFailing"]["for"] == "15m", "an alert not overridden lost its default for")
PY
for f in "$out"/mixin/*.json; do
  grep -q '"name": "k8s_cluster"' "$f" || { echo "FAIL: $(basename "$f") has no k8s_cluster variable" >&2; fail=1; }
done
promtool check rules "$out/mixin/alerts.yaml" >/dev/null || { echo "FAIL: promtool check rules" >&2; fail=1; }
[ $fail -eq 0 ] && echo "mixin_config: selector ($n_sel uses), cluster label ($n_cl uses), runbook URL, a threshold and a for applied; promtool ok"
exit $fail
