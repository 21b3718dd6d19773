#!/usr/bin/env bash
# The mixin installs the way monitoring mixins are installed: `jb install`
# (the real jsonnet-bundler) into a project of the user's that depends on
# dashboards/mixin (a local source here; a git source with subdir
# dashboards/mixin in a real project, docs/dashboards.md), then the real
# jsonnet renders it from vendor/ with the user's overrides. Also: the mixin's
# files are jsonnetfmt-clean, and the rules it renders by default are the
# shipped dashboards/alerts.yaml.
source "$(dirname "$0")/lib.sh"
need_jsonnet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mixin="$REPO_ROOT/dashboards/mixin"
fail=0

unformatted=$(cd "$mixin" && "$(dirname "$JSONNET")/jsonnetfmt" --test \
  $(find . -name '*.libsonnet' -o -name '*.jsonnet') 2>&1) ||
  { echo "FAIL: not jsonnetfmt-clean (run jsonnetfmt -i): $unformatted" >&2; fail=1; }

cd "$work"
"$JB" init >/dev/null 2>&1
python3 - "$mixin" <<'PY'
import json, sys
f = json.load(open("jsonnetfile.json"))
f["dependencies"] = [{"source": {"local": {"directory": sys.argv[1]}}, "version": ""}]
json.dump(f, open("jsonnetfile.json", "w"), indent=2)
PY
"$JB" install >jb.log 2>&1 || { echo "FAIL: jb install: $(cat jb.log)" >&2; exit 1; }
[ -f vendor/mixin/mixin.libsonnet ] || { echo "FAIL: jb install left no vendor/mixin/mixin.libsonnet: $(ls -R vendor | head)" >&2; exit 1; }
cat > main.jsonnet <<'JSONNET'
local mixin = (import 'mixin/mixin.libsonnet') + {
  _config+:: { clusterLabel: 'region' },
};
{
  rules: mixin.prometheusRules.groups + mixin.prometheusAlerts.groups,
  dashboards: std.objectFields(mixin.grafanaDashboards),
  defaults: (import 'mixin/mixin.libsonnet').prometheusRules.groups
            + (import 'mixin/mixin.libsonnet').prometheusAlerts.groups,
}
JSONNET
"$JSONNET" -J vendor main.jsonnet > out.json || { echo "FAIL: jsonnet -J vendor main.jsonnet" >&2; exit 1; }
python3 - out.json "$REPO_ROOT/dashboards/alerts.yaml" <<'PY' || fail=1
import json, sys, yaml
out = json.load(open(sys.argv[1]))
shipped = yaml.safe_load(open(sys.argv[2]))["groups"]
bad = []
if out["defaults"] != shipped:
    bad.append("the rules rendered from vendor/ differ from dashboards/alerts.yaml")
if "region" not in json.dumps(out["rules"]) or "by (cluster" in json.dumps(out["rules"]):
    bad.append("the override of clusterLabel did not reach the rules")
if sorted(out["dashboards"]) != ["trainscope-agent-health.json", "trainscope-cluster-overview.json",
                                 "trainscope-training-job.json"]:
    bad.append("dashboards: %s" % out["dashboards"])
for b in bad:
    print("FAIL: " + b, file=sys.stderr)
if not bad:
    n = sum(len(g["rules"]) for g in out["rules"])
    print(f"mixin_jb: jb install and jsonnet -J vendor render {n} rules and {len(out['dashboards'])} dashboards; defaults equal dashboards/alerts.yaml")
sys.exit(1 if bad else 0)
PY
exit $fail
