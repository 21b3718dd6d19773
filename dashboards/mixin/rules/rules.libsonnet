{
  prometheusRules+:: {
    groups+: [
      {
        name: 'trainscope.ps-traffic.rules',
        interval: '30s',
        rules: [
          // Bytes/s (both directions) each worker exchanges with each PS.
          {
            record: 'training_job_pod_peer_pod:trainscope_worker_ps_traffic_bytes:rate1m',
            expr: |||
              sum by (%(clusterLabel)s, namespace, training_job, pod, peer_pod) (
                rate(trainscope_peer_receive_bytes_total{%(selector)s, role=~"worker|chief|master", peer_role="ps", training_job!=""}[1m])
              )
              + on (%(clusterLabel)s, namespace, training_job, pod, peer_pod)
              sum by (%(clusterLabel)s, namespace, training_job, pod, peer_pod) (
                rate(trainscope_peer_transmit_bytes_total{%(selector)s, role=~"worker|chief|master", peer_role="ps", training_job!=""}[1m])
              )
            ||| % $._config,
          },
          // Bytes/s each PS exchanges with all workers of its job (pod = the PS).
          {
            record: 'training_job_pod:trainscope_ps_traffic_bytes:rate1m',
            expr: |||
              sum without (peer_pod) (
                label_replace(
                  sum by (%(clusterLabel)s, namespace, training_job, peer_pod) (
                    training_job_pod_peer_pod:trainscope_worker_ps_traffic_bytes:rate1m
                  ),
                  "pod", "$1", "peer_pod", "(.+)"
                )
              )
            ||| % $._config,
          },
          // Bytes/s each worker exchanges with all PS of its job (pod = the worker).
          // Not the chief: a TF2 ParameterServerStrategy chief only coordinates and
          // exchanges little by design; it is neither a straggler nor a peer.
          {
            record: 'training_job_pod:trainscope_worker_ps_traffic_bytes:rate1m',
            expr: |||
              sum by (%(clusterLabel)s, namespace, training_job, pod) (
                training_job_pod_peer_pod:trainscope_worker_ps_traffic_bytes:rate1m
              )
              unless on (%(clusterLabel)s, namespace, pod)
              max by (%(clusterLabel)s, namespace, pod) (trainscope_pod_info{%(selector)s, role="chief"})
            ||| % $._config,
          },
          // All PS traffic of the job.
          {
            record: 'training_job:trainscope_ps_traffic_bytes:rate1m',
            expr: |||
              sum by (%(clusterLabel)s, namespace, training_job) (training_job_pod:trainscope_ps_traffic_bytes:rate1m)
            ||| % $._config,
          },
          // Parameter servers of the job that the agents see (an idle PS counts).
          {
            record: 'training_job:trainscope_ps_pods:count',
            expr: |||
              count by (%(clusterLabel)s, namespace, training_job) (
                max by (%(clusterLabel)s, namespace, training_job, pod) (trainscope_pod_info{%(selector)s, role="ps", training_job!=""})
              )
            ||| % $._config,
          },
          // Workers of the job that exchange bytes with its PS.
          {
            record: 'training_job:trainscope_worker_pods:count',
            expr: |||
              count by (%(clusterLabel)s, namespace, training_job) (training_job_pod:trainscope_worker_ps_traffic_bytes:rate1m)
            ||| % $._config,
          },
          // Cluster-wide share of the job's PS traffic each PS carries (0..1;
          // 1/n when balanced). Unlike the agents' trainscope_ps_traffic_share_ratio
          // (one node's view), this sums the workers of every node.
          {
            record: 'training_job_pod:trainscope_ps_traffic_share:ratio',
            expr: |||
              training_job_pod:trainscope_ps_traffic_bytes:rate1m
              / on (%(clusterLabel)s, namespace, training_job) group_left ()
              (training_job:trainscope_ps_traffic_bytes:rate1m > 0)
            ||| % $._config,
          },
          // Max over mean of the per-PS traffic (1 balanced, n = one PS of n
          // carries everything); the mean counts idle PS too.
          {
            record: 'training_job:trainscope_ps_traffic_skew:ratio',
            expr: |||
              max by (%(clusterLabel)s, namespace, training_job) (training_job_pod:trainscope_ps_traffic_share:ratio)
              * on (%(clusterLabel)s, namespace, training_job) training_job:trainscope_ps_pods:count
            ||| % $._config,
          },
          // Median over the job's workers of their PS exchange rate.
          {
            record: 'training_job:trainscope_worker_ps_traffic_bytes:median_rate1m',
            expr: |||
              quantile by (%(clusterLabel)s, namespace, training_job) (0.5, training_job_pod:trainscope_worker_ps_traffic_bytes:rate1m)
            ||| % $._config,
          },
        ],
      },
      {
        name: 'trainscope.training-speed.rules',
        interval: '30s',
        rules: [
          // Training steps per second of the job: the sum over its workers with a
          // step rate (trainscope_worker_steps_per_second), and how many those
          // are. Throughput against worker count is the scaling view.
          {
            record: 'training_job:trainscope_worker_steps_per_second:sum',
            expr: |||
              sum by (%(clusterLabel)s, namespace, training_job) (trainscope_worker_steps_per_second{%(selector)s, training_job!=""})
            ||| % $._config,
          },
          {
            record: 'training_job:trainscope_worker_steps_per_second:count',
            expr: |||
              count by (%(clusterLabel)s, namespace, training_job) (trainscope_worker_steps_per_second{%(selector)s, training_job!=""})
            ||| % $._config,
          },
          // Share of its time each worker spends exchanging with each PS (both
          // directions; from its exchange bursts).
          {
            record: 'training_job_pod_peer_pod:trainscope_worker_ps_exchange:ratio_rate1m',
            expr: |||
              sum by (%(clusterLabel)s, namespace, training_job, pod, peer_pod) (
                rate(trainscope_peer_receive_exchange_seconds_total{%(selector)s, role=~"worker|master", peer_role="ps", training_job!=""}[1m])
              )
              + on (%(clusterLabel)s, namespace, training_job, pod, peer_pod)
              sum by (%(clusterLabel)s, namespace, training_job, pod, peer_pod) (
                rate(trainscope_peer_transmit_exchange_seconds_total{%(selector)s, role=~"worker|master", peer_role="ps", training_job!=""}[1m])
              )
            ||| % $._config,
          },
          // Per PS (pod = the PS): the median over the job's workers of that share.
          {
            record: 'training_job_pod:trainscope_ps_worker_exchange:median_ratio_rate1m',
            expr: |||
              sum without (peer_pod) (
                label_replace(
                  quantile by (%(clusterLabel)s, namespace, training_job, peer_pod) (
                    0.5, training_job_pod_peer_pod:trainscope_worker_ps_exchange:ratio_rate1m
                  ),
                  "pod", "$1", "peer_pod", "(.+)"
                )
              )
            ||| % $._config,
          },
          // What a hot PS costs the job's step (docs/diagnosis.md, the
          // hot_parameter_server cost model): the workers' exchange share with it
          // times the part a balanced placement removes, 1 - fair share / share.
          {
            record: 'training_job_pod:trainscope_hot_ps_cost:ratio',
            expr: |||
              training_job_pod:trainscope_ps_worker_exchange:median_ratio_rate1m
              * on (%(clusterLabel)s, namespace, training_job, pod)
              clamp_min(
                1 - 1 / (
                  training_job_pod:trainscope_ps_traffic_share:ratio
                  * on (%(clusterLabel)s, namespace, training_job) group_left ()
                  training_job:trainscope_ps_pods:count
                ),
                0
              )
            ||| % $._config,
          },
        ],
      },
      // Goodput (docs/diagnosis.md, "Goodput and lost time"): every node's agent
      // counts each job it holds pods of, so a job spread over N nodes is counted
      // N times: max by job (and state or cause) over the agents, then sums over
      // jobs.
      {
        name: 'trainscope.goodput.rules',
        interval: '1m',
        rules: [
          {
            record: 'training_job:trainscope_job_goodput:ratio_max',
            expr: |||
              max by (%(clusterLabel)s, namespace, training_job) (trainscope_job_goodput_ratio{%(selector)s})
            ||| % $._config,
          },
          // Seconds each job lost in the last hour, by cause.
          {
            record: 'training_job_cause:trainscope_job_lost_seconds:increase1h',
            expr: |||
              max by (%(clusterLabel)s, namespace, training_job, cause) (
                increase(trainscope_job_lost_seconds_total{%(selector)s}[1h])
              )
            ||| % $._config,
          },
          // Seconds each job was seen in the last hour (all states).
          {
            record: 'training_job:trainscope_job_seconds:increase1h',
            expr: |||
              sum by (%(clusterLabel)s, namespace, training_job) (
                max by (%(clusterLabel)s, namespace, training_job, state) (
                  increase(trainscope_job_seconds_total{%(selector)s}[1h])
                )
              )
            ||| % $._config,
          },
          // The cluster's lost time of the last hour by cause, and its goodput:
          // 1 - lost / all job seconds.
          {
            record: 'cause:trainscope_job_lost_seconds:increase1h',
            expr: |||
              sum by (%(clusterLabel)s, cause) (training_job_cause:trainscope_job_lost_seconds:increase1h)
            ||| % $._config,
          },
          {
            record: 'cluster:trainscope_job_goodput:ratio1h',
            expr: |||
              1 - (
                sum by (%(clusterLabel)s) (training_job_cause:trainscope_job_lost_seconds:increase1h)
                or
                0 * sum by (%(clusterLabel)s) (training_job:trainscope_job_seconds:increase1h)
              )
              / sum by (%(clusterLabel)s) (training_job:trainscope_job_seconds:increase1h)
            ||| % $._config,
          },
        ],
      },
      {
        name: 'trainscope.resources.rules',
        interval: '30s',
        rules: [
          // Fraction of CFS periods in which the pod was throttled.
          {
            record: 'namespace_pod:trainscope_pod_cpu_throttled_periods:ratio_rate5m',
            expr: |||
              sum by (%(clusterLabel)s, namespace, pod, training_job, role) (rate(trainscope_pod_cpu_throttled_periods_total{%(selector)s}[5m]))
              / on (%(clusterLabel)s, namespace, pod, training_job, role)
              (sum by (%(clusterLabel)s, namespace, pod, training_job, role) (rate(trainscope_pod_cpu_periods_total{%(selector)s}[5m])) > 0)
            ||| % $._config,
          },
          // Node NIC utilization per direction (only NICs that report a speed).
          {
            record: 'node_device_direction:trainscope_node_network_utilization:ratio_rate1m',
            expr: |||
              label_replace(
                rate(trainscope_node_network_receive_bytes_total{%(selector)s}[1m])
                / on (%(clusterLabel)s, instance, node, device) (trainscope_node_network_speed_bytes{%(selector)s} > 0),
                "direction", "receive", "", "")
              or
              label_replace(
                rate(trainscope_node_network_transmit_bytes_total{%(selector)s}[1m])
                / on (%(clusterLabel)s, instance, node, device) (trainscope_node_network_speed_bytes{%(selector)s} > 0),
                "direction", "transmit", "", "")
            ||| % $._config,
          },
          // Pod traffic against its kubernetes.io/{ingress,egress}-bandwidth
          // annotation, per direction (only annotated pods).
          {
            record: 'namespace_pod_direction:trainscope_pod_network_bandwidth_utilization:ratio_rate1m',
            expr: |||
              sum by (%(clusterLabel)s, namespace, pod, training_job, role, direction) (
                label_replace(rate(trainscope_pod_network_receive_bytes_total{%(selector)s}[1m]), "direction", "receive", "", "")
                / on (%(clusterLabel)s, instance, namespace, pod) group_left (direction)
                (trainscope_pod_bandwidth_limit_bytes_per_second{%(selector)s, direction="receive"} > 0)
              )
              or
              sum by (%(clusterLabel)s, namespace, pod, training_job, role, direction) (
                label_replace(rate(trainscope_pod_network_transmit_bytes_total{%(selector)s}[1m]), "direction", "transmit", "", "")
                / on (%(clusterLabel)s, instance, namespace, pod) group_left (direction)
                (trainscope_pod_bandwidth_limit_bytes_per_second{%(selector)s, direction="transmit"} > 0)
              )
            ||| % $._config,
          },
        ],
      },
    ],
  },
}
