#!/usr/bin/env bash
# The mixin settings reach every rule and panel: rendering with another
# selector and cluster label (generate.mjs --config --out) leaves no trace of
# the defaults, and the result still passes promtool. The shipped files are
# the rendering with dashboards/mixin.yaml (deploy.generated_up_to_date).
source "$(dirname "$0")/lib.sh"
need promtool "install Debian's prometheus package (bash scripts/install-deps.sh)"
need_node
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat > "$out/mine.yaml" <<'YAML'
selector: job="ts-agents", env="prod"
clusterLabel: k8s_cluster
runbookURLPattern: https://runbooks.example.com/trainscope/%s.md
YAML
node "$REPO_ROOT/dashboards/generate.mjs" --config "$out/mine.yaml" --out "$out/mixin" >/dev/null
fail=0
no() {  # no PATTERN WHAT: PATTERN must not occur in the rendering
  if grep -rn -- "$1" "$out/mixin" >/dev/null; then
    echo "FAIL: $2: $(grep -rn -- "$1" "$out/mixin" | head -3)" >&2; fail=1
  fi
}
no 'trainscope-agent"' 'the default job selector is left'
no 'by (namespace' 'an aggregation without the cluster label'
no 'on (namespace' 'a vector match without the cluster label'
no 'by (cluster' 'the default cluster label is left'
no 'github.com/trainscope/trainscope/blob/main/docs/runbooks.md' 'the default runbook URL is left'
n_sel=$(grep -o 'job="ts-agents", env="prod"' "$out/mixin/alerts.yaml" | wc -l)
n_cl=$(grep -o 'k8s_cluster' "$out/mixin/alerts.yaml" | wc -l)
[ "$n_sel" -ge 20 ] || { echo "FAIL: the selector appears $n_sel times in alerts.yaml" >&2; fail=1; }
[ "$n_cl" -ge 30 ] || { echo "FAIL: the cluster label appears $n_cl times in alerts.yaml" >&2; fail=1; }
grep -q 'runbook_url: https://runbooks.example.com/trainscope/trainscopeagentdown.md' "$out/mixin/alerts.yaml" ||
  { echo "FAIL: runbookURLPattern not applied" >&2; fail=1; }
for f in "$out"/mixin/*.json; do
  grep -q '"name": "k8s_cluster"' "$f" || { echo "FAIL: $(basename "$f") has no k8s_cluster variable" >&2; fail=1; }
done
promtool check rules "$out/mixin/alerts.yaml" >/dev/null || { echo "FAIL: promtool check rules" >&2; fail=1; }
[ $fail -eq 0 ] && echo "mixin_config: selector ($n_sel uses), cluster label ($n_cl uses) and runbook URL applied; promtool ok"
exit $fail
