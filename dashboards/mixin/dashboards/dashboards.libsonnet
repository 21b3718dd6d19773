// The Trainscope dashboards, keyed by file name (monitoring-mixin layout);
// $._config comes from config.libsonnet.
{
  grafanaDashboards+:: {
    'trainscope-training-job.json': (import 'training_job.libsonnet')($._config),
    'trainscope-cluster-overview.json': (import 'cluster_overview.libsonnet')($._config),
    'trainscope-agent-health.json': (import 'agent_health.libsonnet')($._config),
  },
}
