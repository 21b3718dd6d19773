local text = import '../lib/text.libsonnet';

{
  prometheusAlerts+:: {
    groups+: [
      {
        name: 'trainscope.alerts',
        rules: [
          // 2-4 PS: share >= clamp(2/n, 0.5, 0.75); from 5 PS: share >= 2/n
          // (docs/diagnosis.md); the job moves at least 100 kB/s through its PS
          // (the _config defaults);
          // not when the skew is known to cost the step less than 5% (severity
          // info in the agents' report: small variables, long compute). Agents
          // without exchange times (older releases) leave the cost unknown.
          {
            alert: 'TrainscopeHotParameterServer',
            expr: |||
              (
                training_job_pod:trainscope_ps_traffic_share:ratio
                >= on (%(clusterLabel)s, namespace, training_job) group_left ()
                clamp_max(2 / training_job:trainscope_ps_pods:count, %(hotPSMaxShareThreshold)g)
              )
              and on (%(clusterLabel)s, namespace, training_job) (training_job:trainscope_ps_pods:count >= 2)
              and on (%(clusterLabel)s, namespace, training_job) (training_job:trainscope_ps_traffic_bytes:rate1m >= %(minPSTrafficBytesPerSecond)g)
              unless on (%(clusterLabel)s, namespace, training_job, pod) (training_job_pod:trainscope_hot_ps_cost:ratio < %(hotPSMinCostRatio)g)
            ||| % $._config,
            'for': $._config.alertFor.TrainscopeHotParameterServer,
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: "One parameter server carries most of its training job's traffic.",
              description: '{{ $labels.namespace }}/{{ $labels.pod }} carries {{ $value | humanizePercentage }} of the PS traffic of training job {{ $labels.training_job }}, measured from the workers on all nodes. Its variables are not partitioned over the parameter servers; moving pods between nodes or adding PS will not help.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('TrainscopeHotParameterServer'),
            },
          },
          // Any diagnosis an agent holds (they enter and clear with hysteresis
          // already); severity is the diagnosis's own, from what it costs the
          // job's step. Info diagnoses (cost under 5%) are in the report only.
          // Kinds with an alert of their own (below) are left out: one page per
          // problem.
          {
            alert: 'TrainscopeDiagnosisActive',
            expr: |||
              max by (%(clusterLabel)s, kind, severity, namespace, training_job, pod, node) (trainscope_diagnosis_active{%(selector)s, severity=~"warning|critical", kind!~"training_stalled|pod_restarting"}) == 1
            ||| % $._config,
            'for': $._config.alertFor.TrainscopeDiagnosisActive,
            annotations: {
              summary: 'Trainscope diagnosed {{ $labels.kind }} on a training pod.',
              description: "The Trainscope agent reports {{ $labels.kind }} ({{ $labels.severity }}) for {{ $labels.namespace }}/{{ $labels.pod }} of training job {{ $labels.training_job }}. The agent's /api/v1/report (or `trainscope report`) has the evidence and what to change.",
              runbook_url: $._config.runbookURLPattern % std.asciiLower('TrainscopeDiagnosisActive'),
            },
          },
          // A job makes no step while its pods run (critical), or one worker of
          // an asynchronous PS job stopped while the others go on (warning):
          // the severity is the diagnosis's own. The agent raises it only after
          // no step for max(10 s, 3 x the median step) over consecutive
          // windows, so `for: 1m` (the least the rules allow against flapping)
          // adds at most a minute to a page that still comes far sooner than
          // NCCL's 30-minute watchdog, and keeps one odd scrape from paging
          // anyone. Every agent with ranks of the job may hold it: one alert
          // per (job, suspect), whichever agents report it (no instance, node).
          {
            alert: 'TrainscopeTrainingStalled',
            expr: |||
              max by (%(clusterLabel)s, severity, namespace, training_job, pod) (trainscope_diagnosis_active{%(selector)s, kind="training_stalled", severity=~"warning|critical"}) == 1
            ||| % $._config,
            'for': $._config.alertFor.TrainscopeTrainingStalled,
            annotations: {
              summary: 'A training job makes no progress while its pods run.',
              description: "Training job {{ $labels.namespace }}/{{ $labels.training_job }} has stopped making steps ({{ $labels.severity }}){{ if $labels.pod }}; the suspect rank is {{ $labels.pod }}{{ else }}; every rank waits on the others{{ end }}. The agent's report (`trainscope report`) has the per-rank table: each rank's process state, CPU, how long it has been quiet and the peer it waits on.",
              runbook_url: $._config.runbookURLPattern % std.asciiLower('TrainscopeTrainingStalled'),
            },
          },
          // The kubelet restarted a container of a training pod in the last
          // 10 minutes (warning), or it crash-loops (critical): the
          // diagnosis's severity. The diagnosis stays active 10 minutes after
          // the exit, so `for: 1m` loses no restart.
          {
            alert: 'TrainscopePodRestarting',
            expr: |||
              max by (%(clusterLabel)s, severity, namespace, training_job, pod) (trainscope_diagnosis_active{%(selector)s, kind="pod_restarting", severity=~"warning|critical"}) == 1
            ||| % $._config,
            'for': $._config.alertFor.TrainscopePodRestarting,
            annotations: {
              summary: 'A training pod restarted.',
              description: "{{ $labels.namespace }}/{{ $labels.pod }} of training job {{ $labels.training_job }} restarted ({{ $labels.severity }}). The agent's report (`trainscope report`) says how its last run ended (reason, exit code, signal) and how long it was down.",
              runbook_url: $._config.runbookURLPattern % std.asciiLower('TrainscopePodRestarting'),
            },
          },
          // Below half the median of the job's workers (>= 3 workers, median
          // >= 100 kB/s; the _config defaults), as the straggler_worker
          // detector, cluster-wide.
          {
            alert: 'TrainscopeStragglerWorker',
            expr: |||
              (
                training_job_pod:trainscope_worker_ps_traffic_bytes:rate1m
                < on (%(clusterLabel)s, namespace, training_job) group_left ()
                (%(stragglerBelowMedianRatio)g * training_job:trainscope_worker_ps_traffic_bytes:median_rate1m)
              )
              and on (%(clusterLabel)s, namespace, training_job) (training_job:trainscope_worker_pods:count >= %(stragglerMinWorkers)d)
              and on (%(clusterLabel)s, namespace, training_job) (training_job:trainscope_worker_ps_traffic_bytes:median_rate1m >= %(minPSTrafficBytesPerSecond)g)
            ||| % $._config,
            'for': $._config.alertFor.TrainscopeStragglerWorker,
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'A worker exchanges far less with the parameter servers than its peers.',
              description: "Worker {{ $labels.namespace }}/{{ $labels.pod }} of training job {{ $labels.training_job }} exchanges {{ $value | humanize }}B/s with the PS, less than %s the median of the job's workers. It slows every synchronous step." % text.fraction($._config.stragglerBelowMedianRatio),
              runbook_url: $._config.runbookURLPattern % std.asciiLower('TrainscopeStragglerWorker'),
            },
          },
          {
            alert: 'TrainscopeNetworkSaturated',
            expr: |||
              node_device_direction:trainscope_node_network_utilization:ratio_rate1m >= %(networkSaturatedRatio)g
            ||| % $._config,
            'for': $._config.alertFor.TrainscopeNetworkSaturated,
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: "A node's network link runs at %d%% of its capacity or more." % (100 * $._config.networkSaturatedRatio),
              description: '{{ $labels.device }} on node {{ $labels.node }} runs at {{ $value | humanizePercentage }} of its link speed ({{ $labels.direction }}). Training traffic through it is limited by the link.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('TrainscopeNetworkSaturated'),
            },
          },
          {
            alert: 'TrainscopePodBandwidthSaturated',
            expr: |||
              namespace_pod_direction:trainscope_pod_network_bandwidth_utilization:ratio_rate1m{training_job!=""} >= %(podBandwidthSaturatedRatio)g
            ||| % $._config,
            'for': $._config.alertFor.TrainscopePodBandwidthSaturated,
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'A training pod uses %d%% or more of its bandwidth annotation.' % (100 * $._config.podBandwidthSaturatedRatio),
              description: '{{ $labels.namespace }}/{{ $labels.pod }} ({{ $labels.role }} of {{ $labels.training_job }}) runs at {{ $value | humanizePercentage }} of its kubernetes.io bandwidth annotation ({{ $labels.direction }}).',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('TrainscopePodBandwidthSaturated'),
            },
          },
          // kubernetes-mixin's CPUThrottlingHigh (severity info) covers every
          // container; this one only the pods of a training job with a role
          // (PS, worker, ...), where throttling one pod slows every synchronous
          // step of the job, hence warning. docs/runbooks.md: inhibiting
          // CPUThrottlingHigh for those pods.
          {
            alert: 'TrainscopeCPUThrottled',
            expr: |||
              namespace_pod:trainscope_pod_cpu_throttled_periods:ratio_rate5m{training_job!="", role!=""} >= %(cpuThrottledRatio)g
            ||| % $._config,
            'for': $._config.alertFor.TrainscopeCPUThrottled,
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'A training pod is CPU-throttled.',
              description: '{{ $labels.namespace }}/{{ $labels.pod }} ({{ $labels.role }} of {{ $labels.training_job }}) was throttled in {{ $value | humanizePercentage }} of its CFS periods over the last 5 minutes.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('TrainscopeCPUThrottled'),
            },
          },
          {
            alert: 'TrainscopeAgentDown',
            expr: |||
              up{%(selector)s} == 0
            ||| % $._config,
            'for': $._config.alertFor.TrainscopeAgentDown,
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'Prometheus cannot scrape a Trainscope agent.',
              description: "The Trainscope agent {{ $labels.instance }} has not answered scrapes for %s: that node's training pods are not monitored." % text.duration($._config.alertFor.TrainscopeAgentDown),
              runbook_url: $._config.runbookURLPattern % std.asciiLower('TrainscopeAgentDown'),
            },
          },
          // No agent scraped at all: every target down, or no target (DaemonSet
          // deleted, ServiceMonitor not picked up), where TrainscopeAgentDown
          // cannot fire for lack of an `up` series.
          {
            alert: 'TrainscopeAgentAbsent',
            expr: |||
              max by (%(clusterLabel)s, job) (up{%(selector)s}) == 0
              or
              absent(up{%(selector)s})
            ||| % $._config,
            'for': $._config.alertFor.TrainscopeAgentAbsent,
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'No Trainscope agent is scraped.',
              description: 'Prometheus has had no successfully scraped target of job {{ $labels.job }} for %s: no training pod in the cluster is monitored by Trainscope.' % text.duration($._config.alertFor.TrainscopeAgentAbsent),
              runbook_url: $._config.runbookURLPattern % std.asciiLower('TrainscopeAgentAbsent'),
            },
          },
          // The gpu collector reports 0 on nodes without GPUs by design.
          {
            alert: 'TrainscopeCollectorFailing',
            expr: |||
              trainscope_collector_up{%(selector)s, collector!="gpu"} == 0
            ||| % $._config,
            'for': $._config.alertFor.TrainscopeCollectorFailing,
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'A Trainscope collector keeps failing.',
              description: 'The {{ $labels.collector }} collector of agent {{ $labels.instance }} has been failing for %s; its metrics are missing for that node.' % text.duration($._config.alertFor.TrainscopeCollectorFailing),
              runbook_url: $._config.runbookURLPattern % std.asciiLower('TrainscopeCollectorFailing'),
            },
          },
          {
            alert: 'TrainscopeFlowsLosingData',
            expr: |||
              (
                rate(trainscope_flows_map_evictions_total{%(selector)s}[10m])
                + rate(trainscope_flows_map_insert_failures_total{%(selector)s}[10m])
              ) > 0
              or
              rate(trainscope_flows_pcap_kernel_drops_total{%(selector)s}[10m]) > 0
            ||| % $._config,
            'for': $._config.alertFor.TrainscopeFlowsLosingData,
            labels: {
              severity: 'info',
            },
            annotations: {
              summary: 'The flows collector loses per-peer traffic.',
              description: "Agent {{ $labels.instance }} drops flow records ({{ $value | humanize }}/s): the BPF flow map overflows or libpcap's ring falls behind, so per-peer bytes are undercounted on that node.",
              runbook_url: $._config.runbookURLPattern % std.asciiLower('TrainscopeFlowsLosingData'),
            },
          },
        ],
      },
    ],
  },
}
