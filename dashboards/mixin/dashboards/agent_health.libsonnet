local g = import '../lib/grafana.libsonnet';

function(config)
  local qs = (import 'queries.libsonnet')(config);
  // Fragments named in the queries below (`%(name)s`).
  local v = {
    a: '{%s}' % qs.AGENT,
    CL: qs.CL,
    AGENT_NODE: qs.AGENT_NODE,
    byNodeCause: qs.by('node, cause'),
  };
  local q(expr, legend) = g.q(expr % v, legend);
  local tableQuery(expr) = g.tableQuery(expr % v);
  local hide(cols) = { [c]: true for c in ['Time'] + cols };
  // One flow-loss counter's rate, labelled with its cause.
  local lost(metric, cause) =
    'label_replace(rate(%s%s[$__rate_interval]), "cause", "%s", "", "")' % [metric, v.a, cause];

  local items = [
    g.row('Agents', 0),
    g.statPanel('Agents up',
                'Agents Prometheus scrapes successfully / all agent targets.',
                { h: 5, w: 6, x: 0, y: 1 },
                [q('sum by (%(CL)s) (up%(a)s)', 'up'), q('count by (%(CL)s) (up%(a)s)', 'targets')],
                'none'),
    g.tablePanel('Collector status',
                 'Each collector of each agent: 1 when its last run succeeded, 0 when it failed or had nothing to collect (gpu is 0 on nodes without GPUs).',
                 { h: 5, w: 18, x: 6, y: 1 },
                 [tableQuery('sort(trainscope_collector_up%(a)s%(AGENT_NODE)s)')],
                 'none',
                 hide(['__name__', 'job'])),
    g.ts('Collector up',
         "1 when the collector's last run succeeded.",
         { h: 8, w: 12, x: 0, y: 6 },
         [q('trainscope_collector_up%(a)s%(AGENT_NODE)s', '{{node}} {{collector}}')],
         'none',
         min=0,
         max=1),
    g.ts('Collector duration',
         "Wall time of each collector's last run.",
         { h: 8, w: 12, x: 12, y: 6 },
         [q('trainscope_collector_duration_seconds%(a)s%(AGENT_NODE)s', '{{node}} {{collector}}')],
         's'),

    g.row('Cost', 14),
    g.ts('Agent CPU',
         'CPU cores used by the agent process and by its sampling thread.',
         { h: 8, w: 8, x: 0, y: 15 },
         [
           q('rate(process_cpu_seconds_total%(a)s[$__rate_interval])%(AGENT_NODE)s', '{{node}} process'),
           q('rate(trainscope_sampler_cpu_seconds_total%(a)s[$__rate_interval])%(AGENT_NODE)s', '{{node}} sampler'),
         ],
         'none'),
    g.ts('Agent memory',
         'Resident memory of the agent (the DaemonSet limit is 128Mi).',
         { h: 8, w: 8, x: 8, y: 15 },
         [q('process_resident_memory_bytes%(a)s%(AGENT_NODE)s', '{{node}}')],
         'bytes'),
    g.ts('Scrape cost',
         "Wall time of the previous /metrics render, and Prometheus's scrape duration.",
         { h: 8, w: 8, x: 16, y: 15 },
         [
           q('trainscope_render_duration_seconds%(a)s%(AGENT_NODE)s', '{{node}} render'),
           q('scrape_duration_seconds%(a)s%(AGENT_NODE)s', '{{node}} scrape'),
         ],
         's'),

    g.row('Flows', 23),
    g.ts('BPF flow map fill',
         'Entries in the in-kernel flow map over its capacity (--flow-map-entries); eBPF mode only.',
         { h: 8, w: 8, x: 0, y: 24 },
         [q('(trainscope_flows_map_entries%(a)s / trainscope_flows_map_max_entries%(a)s)%(AGENT_NODE)s', '{{node}}')],
         'percentunit',
         min=0,
         max=1),
    g.ts('Flow records lost',
         'Per second: flow map LRU evictions and insert failures (eBPF), kernel ring and interface drops (pcap). Anything above 0 undercounts per-peer bytes.',
         { h: 8, w: 8, x: 8, y: 24 },
         [g.q('sum %s (%s%s)' % [v.byNodeCause, std.join(' or ', [
           lost('trainscope_flows_map_evictions_total', 'bpf_map_eviction'),
           lost('trainscope_flows_map_insert_failures_total', 'bpf_map_insert_failure'),
           lost('trainscope_flows_pcap_kernel_drops_total', 'pcap_kernel_drop'),
           lost('trainscope_flows_pcap_interface_drops_total', 'pcap_interface_drop'),
         ]), v.AGENT_NODE], '{{node}} {{cause}}')],
         'pps'),
    g.ts('Unattributed bytes',
         'Bytes counted for cgroups or addresses the pod table does not know (yet).',
         { h: 8, w: 8, x: 16, y: 24 },
         [q('rate(trainscope_flows_unattributed_bytes_total%(a)s[$__rate_interval])%(AGENT_NODE)s', '{{node}}')],
         'Bps'),

    g.row('Discovery and sampling', 32),
    g.ts('Discovery ready',
         "1 once discovery has listed the node's pods.",
         { h: 8, w: 8, x: 0, y: 33 },
         [q('trainscope_discovery_ready%(a)s%(AGENT_NODE)s', '{{node}} {{mode}}')],
         'none',
         min=0,
         max=1),
    g.ts('Discovery errors',
         'Failed list/watch/read attempts per second.',
         { h: 8, w: 8, x: 8, y: 33 },
         [q('rate(trainscope_discovery_errors_total%(a)s[$__rate_interval])%(AGENT_NODE)s', '{{node}} {{mode}}')],
         'none'),
    g.ts('Sample age',
         'Seconds since the snapshot the agent serves was taken (about --interval when healthy).',
         { h: 8, w: 8, x: 16, y: 33 },
         [q('(time() - trainscope_last_sample_timestamp_seconds%(a)s)%(AGENT_NODE)s', '{{node}}')],
         's'),
    g.tablePanel('Agent versions',
                 'trainscope_build_info per agent.',
                 { h: 6, w: 24, x: 0, y: 41 },
                 [tableQuery('trainscope_build_info%(a)s%(AGENT_NODE)s')],
                 'none',
                 hide(['Value', '__name__'])),
  ];

  g.dashboard(
    'trainscope-agent-health',
    'Trainscope / Agent health',
    'The Trainscope agents themselves: collectors, cost per scrape and per sample, flow capture losses, discovery.',
    qs.variables(['node']),
    items,
  )
