// Every file the mixin renders, by name: generate.py writes them (the YAML
// as text, the dashboards pretty-printed). `overrides` is mixed in last,
// e.g. { _config+:: { clusterLabel: 'k8s_cluster' } }.
function(overrides={})
  local mixin = (import 'mixin.libsonnet') + overrides;
  local c = mixin._config;
  // Recording rules first: the alerts read them.
  local rules = { groups: mixin.prometheusRules.groups + mixin.prometheusAlerts.groups };
  local yaml(doc) = std.manifestYamlDoc(doc, indent_array_in_object=true, quote_keys=false) + '\n';
  {
    'alerts.yaml': |||
      # GENERATED from dashboards/mixin by dashboards/mixin/generate.py; do not
      # edit (docs/dashboards.md, "Rules").
      #
      #   promtool check rules dashboards/alerts.yaml
      #   promtool test rules dashboards/alerts_test.yaml
      #
      # Scrape job selector: %s; cluster label: %s.
    ||| % [c.selector, c.clusterLabel] + yaml(rules),
    'prometheusrule.yaml': |||
      # GENERATED from dashboards/mixin by dashboards/mixin/generate.py; do not edit.
    ||| + yaml({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: {
        name: 'trainscope',
        namespace: 'trainscope',
        labels: { 'app.kubernetes.io/name': 'trainscope-agent', prometheus: 'k8s', role: 'alert-rules' },
      },
      spec: rules,
    }),
  } + mixin.grafanaDashboards
