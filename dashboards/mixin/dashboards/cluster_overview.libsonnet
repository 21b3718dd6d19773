local g = import '../lib/grafana.libsonnet';

function(config)
  local qs = (import 'queries.libsonnet')(config);
  local by = qs.by;
  local nodeSel = '{%s, node=~"$node"}' % qs.AGENT;
  // Fragments named in the queries below (`%(name)s`).
  local v = {
    nodeSel: nodeSel,
    nodeCpus: qs.nodeCpus(nodeSel),
    jobs: '{%s}' % qs.SEL_POD,
    recJobs: '{%s}' % qs.REC_POD,
    SEL_POD: qs.SEL_POD,
    CM: qs.CM,
    ON_NODE: qs.ON_NODE,
    byJob: by('namespace, training_job'),
    byJobKind: by('namespace, training_job, kind, severity'),
    byKind: by('kind'),
    byNode: by('node'),
    byGpu: by('namespace, pod, gpu'),
    byCause: by('cause'),
  };
  local q(expr, legend) = g.q(expr % v, legend);
  local instant(expr, legend) = g.instant(expr % v, legend);
  local tableQuery(expr) = g.tableQuery(expr % v);

  local items = [
    g.row('Training jobs', 0),
    g.tablePanel('Jobs with active diagnoses',
                 'Active diagnoses per job and kind, all agents.',
                 { h: 9, w: 12, x: 0, y: 1 },
                 [tableQuery('count %(byJobKind)s (trainscope_diagnosis_active%(jobs)s)')],
                 'none'),
    g.tablePanel('PS balance per job',
                 'Largest PS traffic share and skew (max/mean) per job, cluster-wide.',
                 { h: 9, w: 12, x: 12, y: 1 },
                 [
                   tableQuery('max %(byJob)s (training_job_pod:trainscope_ps_traffic_share:ratio%(recJobs)s)'),
                   tableQuery('training_job:trainscope_ps_traffic_skew:ratio%(recJobs)s'),
                 ],
                 'none'),
    g.statPanel('Active diagnoses by kind',
                'Number of active diagnoses per kind.',
                { h: 5, w: 12, x: 0, y: 10 },
                [q('count %(byKind)s (trainscope_diagnosis_active%(jobs)s)', '{{kind}}')],
                'none'),
    g.statPanel('Training pods per node',
                'Pods of a training job per node.',
                { h: 5, w: 12, x: 12, y: 10 },
                [q('count %(byNode)s (trainscope_pod_info{%(SEL_POD)s, training_job!="", node=~"$node"})', '{{node}}')],
                'none'),

    g.row('Nodes', 15),
    g.barGauge('Nodes by network use',
               "Bytes per second through each node's physical NICs, both directions.",
               { h: 9, w: 12, x: 0, y: 16 },
               [instant('sort_desc(sum %(byNode)s (rate(trainscope_node_network_receive_bytes_total%(nodeSel)s[$__rate_interval])) + sum %(byNode)s (rate(trainscope_node_network_transmit_bytes_total%(nodeSel)s[$__rate_interval])))', '{{node}}')],
               'Bps'),
    g.barGauge('Nodes by CPU use',
               "Busy fraction of each node's CPUs.",
               { h: 9, w: 12, x: 12, y: 16 },
               [instant('sort_desc(sum %(byNode)s (rate(trainscope_node_cpu_usage_seconds_total%(nodeSel)s[$__rate_interval])) / sum %(byNode)s (%(nodeCpus)s))', '{{node}}')],
               'percentunit',
               min=0,
               max=1),
    g.ts('Node network receive / transmit',
         'Per node and NIC; transmit drawn negative.',
         { h: 8, w: 12, x: 0, y: 25 },
         [
           q('rate(trainscope_node_network_receive_bytes_total%(nodeSel)s[$__rate_interval])', '{{node}} {{device}} rx'),
           q('-rate(trainscope_node_network_transmit_bytes_total%(nodeSel)s[$__rate_interval])', '{{node}} {{device}} tx'),
         ],
         'Bps'),
    g.ts('Node memory available',
         'MemAvailable over MemTotal per node.',
         { h: 8, w: 12, x: 12, y: 25 },
         [q('trainscope_node_memory_available_bytes%(nodeSel)s / trainscope_node_memory_total_bytes%(nodeSel)s', '{{node}}')],
         'percentunit',
         min=0,
         max=1),

    g.row('GPUs', 33),
    g.ts('GPU utilization by pod',
         "Summed SM utilization of each container's processes per GPU (NVML).",
         { h: 8, w: 12, x: 0, y: 34 },
         [q('max %(byGpu)s (trainscope_pod_gpu_utilization_ratio%(jobs)s%(ON_NODE)s)', '{{pod}} gpu{{gpu}}')],
         'percentunit',
         min=0,
         max=1),
    g.ts('GPU memory by pod',
         "GPU memory used by each container's processes.",
         { h: 8, w: 12, x: 12, y: 34 },
         [q('sum %(byGpu)s (trainscope_pod_gpu_memory_used_bytes%(jobs)s%(ON_NODE)s)', '{{pod}} gpu{{gpu}}')],
         'bytes'),

    // The goodput recording rules (rules/rules.libsonnet): max over the agents that
    // each count a job, then sums over jobs.
    g.row('Goodput', 42),
    g.statPanel('Cluster goodput (1 h)',
                '1 - time lost / all training-job time over the last hour, all jobs (cluster:trainscope_job_goodput:ratio1h).',
                { h: 8, w: 6, x: 0, y: 43 },
                [q('cluster:trainscope_job_goodput:ratio1h{%(CM)s}', 'goodput')],
                'percentunit',
                min=0,
                max=1),
    g.barGauge('Time lost by cause (1 h)',
               'Hours of training-job time lost in the last hour per cause, summed over the selected jobs.',
               { h: 8, w: 9, x: 6, y: 43 },
               [instant('sort_desc(sum %(byCause)s (training_job_cause:trainscope_job_lost_seconds:increase1h%(recJobs)s)) / 3600', '{{cause}}')],
               'h'),
    g.barGauge('Goodput per job',
               "Each job's goodput since the agents first saw it, lowest first.",
               { h: 8, w: 9, x: 15, y: 43 },
               [instant('sort(training_job:trainscope_job_goodput:ratio_max%(recJobs)s)', '{{namespace}}/{{training_job}}')],
               'percentunit',
               min=0,
               max=1),
  ];

  g.dashboard(
    'trainscope-cluster-overview',
    'Trainscope / Cluster overview',
    'All training jobs and nodes: active diagnoses, PS balance, node network and CPU, GPU use by pod.',
    qs.variables(['namespace', 'training_job', 'node']),
    items,
  )
