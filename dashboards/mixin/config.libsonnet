// The settings of the Trainscope mixin, as kubernetes-mixin's _config.
// Override any of them from your own jsonnet:
//   (import 'trainscope-mixin/mixin.libsonnet') + {
//     _config+:: { clusterLabel: 'k8s_cluster', alertFor+: { TrainscopeCPUThrottled: '30m' } },
//   }
// The defaults render the files shipped in dashboards/ and daemonset/
// (docs/dashboards.md, "Mixin settings").
{
  _config+:: {
    // Label matchers selecting the agents' series in every rule and panel:
    // the job the ServiceMonitor/PodMonitor gives them. Add matchers when
    // several installations share one Prometheus (job="...", env="prod").
    selector: 'job="trainscope-agent"',

    // The label that tells clusters apart in a Thanos/Mimir/Cortex view
    // (usually an external label). Every aggregation and vector match keeps
    // it, and the dashboards get a variable of that name. One Prometheus per
    // cluster, with no such label, aggregates exactly as without it.
    clusterLabel: 'cluster',

    // runbook_url of every alert; %s is the alert's name in lower case.
    runbookURLPattern: 'https://github.com/trainscope/trainscope/blob/main/docs/runbooks.md#%s',

    // Thresholds of the alerts. The first four follow the agent's
    // detectors (docs/diagnosis.md), which judge the same evidence per node.
    // A hot PS: its traffic share at least 2/n of n PS, capped here.
    hotPSMaxShareThreshold: 0.75,
    // Skew that costs the step less than this is left to the report (info).
    hotPSMinCostRatio: 0.05,
    // Below this a job's PS traffic is too small to judge (bytes/s).
    minPSTrafficBytesPerSecond: 100e3,
    // A straggler exchanges less than this times the median of its job's
    // workers, in a job of at least stragglerMinWorkers workers.
    stragglerBelowMedianRatio: 0.5,
    stragglerMinWorkers: 3,
    // Link and bandwidth-annotation use, and CFS throttling, as fractions.
    networkSaturatedRatio: 0.8,
    podBandwidthSaturatedRatio: 0.8,
    cpuThrottledRatio: 0.25,

    // How long each alert's condition holds before it fires. The agent's
    // diagnoses already enter with hysteresis, hence the short ones.
    alertFor: {
      TrainscopeHotParameterServer: '5m',
      TrainscopeDiagnosisActive: '1m',
      TrainscopeTrainingStalled: '1m',
      TrainscopePodRestarting: '1m',
      TrainscopeStragglerWorker: '5m',
      TrainscopeNetworkSaturated: '5m',
      TrainscopePodBandwidthSaturated: '5m',
      TrainscopeCPUThrottled: '15m',
      TrainscopeAgentDown: '5m',
      TrainscopeAgentAbsent: '15m',
      TrainscopeCollectorFailing: '15m',
      TrainscopeFlowsLosingData: '15m',
    },
  },
}
