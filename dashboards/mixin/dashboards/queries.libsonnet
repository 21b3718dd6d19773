// The query fragments every dashboard builds on, from the two mixin settings:
// `selector` (the agents' scrape job) and `clusterLabel`.
local g = import '../lib/grafana.libsonnet';

function(config)
  local SEL = config.selector;
  local CL = config.clusterLabel;

  // The node CPU count, for the instance -> node join and the CPU share. The
  // agent renamed trainscope_node_cpu_count to trainscope_node_cpus and exports
  // both for one release (docs/metrics.md); `or` keeps agents of either
  // release on the dashboards (it matches without the metric name). Dropping
  // the old name later is this line.
  local nodeCpus(sel) = '(trainscope_node_cpus%s or trainscope_node_cpu_count%s)' % [sel, sel];

  // Every selector: the mixin's selector and the cluster variable. A series
  // without the cluster label matches `=~".*"` (the variable's All).
  local CM = '%s=~"$%s"' % [CL, CL];
  local AGENT = '%s, %s' % [SEL, CM];
  local SEL_POD = AGENT + ', namespace=~"$namespace", training_job=~"$training_job"';
  // Recording rules' output has no job label: only the cluster and pod matchers.
  local REC_POD = CM + ', namespace=~"$namespace", training_job=~"$training_job"';

  {
    SEL: SEL,
    CL: CL,
    nodeCpus: nodeCpus,
    CM: CM,
    AGENT: AGENT,
    SEL_POD: SEL_POD,
    REC_POD: REC_POD,

    // Keeps pod series whose pod runs on a selected node (pod series carry no
    // node label; trainscope_pod_info does).
    ON_NODE: ' and on (%s, namespace, pod) trainscope_pod_info{%s, node=~"$node"}' % [CL, AGENT],

    // Adds the node label to the agent's own series (instance -> node).
    AGENT_NODE: ' * on (%(CL)s, instance) group_left (node) count by (%(CL)s, instance, node) (%(cpus)s)'
                % { CL: CL, cpus: nodeCpus('{%s, node=~"$node"}' % AGENT) },

    // Every aggregation keeps the cluster label.
    by(labels): 'by (%s, %s)' % [CL, labels],

    // The cluster variable first, then `names` of the others.
    variables(names):
      local all = {
        [CL]: g.queryVariable(CL, 'Cluster', 'label_values(trainscope_build_info{%s}, %s)' % [SEL, CL]),
        namespace: g.queryVariable('namespace',
                                   'Namespace',
                                   'label_values(trainscope_pod_info{%s}, namespace)' % AGENT),
        training_job: g.queryVariable(
          'training_job',
          'Training job',
          'label_values(trainscope_pod_info{%s, namespace=~"$namespace", training_job!=""}, training_job)' % AGENT
        ),
        node: g.queryVariable('node', 'Node', 'label_values(trainscope_pod_info{%s}, node)' % AGENT),
      };
      [all[n] for n in [CL] + names],

    RED_AT(orange, red): [
      { color: 'green', value: null },
      { color: 'orange', value: orange },
      { color: 'red', value: red },
    ],
  }
