// The Trainscope monitoring mixin: recording rules (prometheusRules),
// alerts (prometheusAlerts) and Grafana dashboards (grafanaDashboards),
// with the settings of config.libsonnet in _config. Install it with
// jsonnet-bundler (docs/dashboards.md):
//   jb install github.com/trainscope/trainscope/dashboards/mixin@main
(import 'config.libsonnet') +
(import 'rules/rules.libsonnet') +
(import 'rules/alerts.libsonnet') +
(import 'dashboards/dashboards.libsonnet')
