#!/usr/bin/env node
// Generates, from the mixin sources and the settings of dashboards/mixin.yaml
// (selector, cluster label, runbook URL pattern; docs/dashboards.md):
// - the Grafana dashboards (dashboards/*.json, and copies for kustomize's
//   configMapGenerator in daemonset/components/grafana-dashboards/),
// - the rules file dashboards/alerts.yaml (from dashboards/alerts.src.yaml)
//   and the Prometheus Operator PrometheusRule daemonset/base/prometheusrule.yaml.
// The dashboards are built with Grafana's Foundation SDK
// (@grafana/grafana-foundation-sdk, version pinned in tests/deploy/package.json;
// helpers in dashboards/sdk.mjs). The generated files are committed so users
// can import or apply them.
//
//   node dashboards/generate.mjs          # rewrite the generated files
//   node dashboards/generate.mjs --check  # exit 1 when one is out of date
//   node dashboards/generate.mjs --config my-mixin.yaml --out DIR
//                                         # your settings: alerts.yaml,
//                                         # prometheusrule.yaml, *.json in DIR
//
// Needs the packages of tests/deploy: `npm ci --prefix tests/deploy` (or the
// deploy.npm_ci test).
import { readFileSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import {
  q, instant, tableQuery, ts, statPanel, barGauge, tablePanel, row, queryVariable, buildDashboard,
} from "./sdk.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "tests/deploy/package.json"));
const YAML = require("yaml");

const argValue = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const configPath = argValue("--config");
const outDir = argValue("--out");
const defaults = YAML.parse(readFileSync(join(root, "dashboards/mixin.yaml"), "utf8"));
const config = { ...defaults, ...(configPath ? YAML.parse(readFileSync(configPath, "utf8")) : {}) };
for (const key of ["selector", "clusterLabel", "runbookURLPattern"]) {
  if (typeof config[key] !== "string" || !config[key]) {
    console.error(`generate: mixin setting "${key}" must be a non-empty string (dashboards/mixin.yaml)`);
    process.exit(2);
  }
}
if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(config.clusterLabel)) {
  console.error(`generate: clusterLabel "${config.clusterLabel}" is not a Prometheus label name`);
  process.exit(2);
}
const SEL = config.selector;
const CL = config.clusterLabel;

// ---------------------------------------------------------------- queries
// The node CPU count, for the instance -> node join and the CPU share. The
// agent renamed trainscope_node_cpu_count to trainscope_node_cpus and exports
// both for one release (docs/metrics.md); `or` keeps agents of either
// release on the dashboards (it matches without the metric name). Dropping
// the old name later is this line and a regeneration.
const nodeCpus = (sel) => `(trainscope_node_cpus${sel} or trainscope_node_cpu_count${sel})`;
// Every selector: the mixin's selector and the cluster variable. A series
// without the cluster label matches `=~".*"` (the variable's All).
const CM = `${CL}=~"$${CL}"`;
const AGENT = `${SEL}, ${CM}`;
const SEL_POD = `${AGENT}, namespace=~"$namespace", training_job=~"$training_job"`;
// Recording rules' output has no job label: only the cluster and pod matchers.
const REC_POD = `${CM}, namespace=~"$namespace", training_job=~"$training_job"`;
// Keeps pod series whose pod runs on a selected node (pod series carry no
// node label; trainscope_pod_info does).
const ON_NODE = ` and on (${CL}, namespace, pod) trainscope_pod_info{${AGENT}, node=~"$node"}`;
// Adds the node label to the agent's own series (instance -> node).
const AGENT_NODE =
  ` * on (${CL}, instance) group_left (node) count by (${CL}, instance, node) (${nodeCpus(`{${AGENT}, node=~"$node"}`)})`;
// Every aggregation keeps the cluster label.
const by = (labels) => `by (${CL}, ${labels})`;

function variables(names) {
  const all = {
    [CL]: queryVariable(CL, "Cluster", `label_values(trainscope_build_info{${SEL}}, ${CL})`),
    namespace: queryVariable("namespace", "Namespace", `label_values(trainscope_pod_info{${AGENT}}, namespace)`),
    training_job: queryVariable("training_job", "Training job",
      `label_values(trainscope_pod_info{${AGENT}, namespace=~"$namespace", training_job!=""}, training_job)`),
    node: queryVariable("node", "Node", `label_values(trainscope_pod_info{${AGENT}}, node)`),
  };
  return [CL, ...names].map((n) => all[n]);
}
const RED_AT = (orange, red) => [{ color: "green", value: null }, { color: "orange", value: orange }, { color: "red", value: red }];

// ---------------------------------------------------------- training job
function trainingJob() {
  const j = `{${SEL_POD}}`;
  const ps = `{${REC_POD}}`;
  const items = [
    row("Training speed", 0),
    ts("Throughput and workers",
      "Training steps per second of the whole job (sum over its workers, measured from the period of their exchanges with their peers, no instrumentation) and the number of workers with a step rate. When workers are added and the total stops rising, adding workers no longer helps: look at the diagnoses below.",
      { h: 8, w: 8, x: 0, y: 1 },
      [q(`training_job:trainscope_worker_steps_per_second:sum${ps}`, "{{training_job}} steps/s"),
        q(`training_job:trainscope_worker_steps_per_second:count${ps}`, "{{training_job}} workers")], "none", { min: 0 }),
    ts("Steps/s per worker",
      "Each worker's training steps per second (trainscope_worker_steps_per_second) and the job's mean per worker. A worker far below its peers is a straggler; the mean falling as workers are added is a shared bottleneck (a hot PS, a saturated link).",
      { h: 8, w: 8, x: 8, y: 1 },
      [q(`trainscope_worker_steps_per_second${j}`, "{{pod}}"),
        q(`training_job:trainscope_worker_steps_per_second:sum${ps} / training_job:trainscope_worker_steps_per_second:count${ps}`, "mean of {{training_job}}")], "none", { min: 0 }),
    ts("What a hot PS costs the step",
      "Per PS: the share of the workers' time spent exchanging with it times the part a balanced placement removes (docs/diagnosis.md, cost model). Under 5% the skew is harmless (info); above 50% it halves the job's speed or worse.",
      { h: 8, w: 8, x: 16, y: 1 },
      [q(`training_job_pod:trainscope_hot_ps_cost:ratio${ps}`, "{{pod}}")], "percentunit", { min: 0, max: 1 }),
    row("Parameter servers", 9),
    ts("PS traffic share (cluster-wide)",
      "Share of the job's worker<->PS bytes each PS carries, summed over the workers on all nodes (recording rule). 1/n when balanced; one PS far above is a hot PS (TrainscopeHotParameterServer).",
      { h: 8, w: 12, x: 0, y: 10 },
      [q(`training_job_pod:trainscope_ps_traffic_share:ratio${ps}`, "{{training_job}} {{pod}}")],
      "percentunit", { min: 0, max: 1 }),
    barGauge("PS traffic share now", "The same share, last value, per PS.",
      { h: 8, w: 6, x: 12, y: 10 },
      [instant(`sort_desc(training_job_pod:trainscope_ps_traffic_share:ratio${ps})`, "{{pod}}")],
      "percentunit", { min: 0, max: 1, steps: RED_AT(0.5, 0.75) }),
    statPanel("PS traffic skew (max/mean)",
      "Busiest PS over the mean PS (idle PS included): 1 when balanced, n when one PS of n carries everything.",
      { h: 8, w: 6, x: 18, y: 10 },
      [q(`training_job:trainscope_ps_traffic_skew:ratio${ps}`, "{{training_job}}")],
      "none", { decimals: 2, steps: RED_AT(1.5, 2) }),
    ts("Bytes/s per PS",
      "Bytes per second each PS exchanges with the job's workers (both directions, all nodes).",
      { h: 8, w: 12, x: 0, y: 18 },
      [q(`training_job_pod:trainscope_ps_traffic_bytes:rate1m${ps}`, "{{pod}}")], "Bps"),
    ts("PS traffic skew seen by each agent",
      "trainscope_ps_traffic_skew_ratio as each node's agent computes it from the pods it sees (node view; the cluster-wide skew is above).",
      { h: 8, w: 12, x: 12, y: 18 },
      [q(`trainscope_ps_traffic_skew_ratio${j}`, "{{training_job}} @ {{instance}}")], "none"),
    tablePanel("Bytes/s per worker-PS pair",
      "Bytes per second between each worker (pod) and each PS (peer_pod), both directions, measured on the worker's node.",
      { h: 10, w: 12, x: 0, y: 26 },
      [tableQuery(`sort_desc(training_job_pod_peer_pod:trainscope_worker_ps_traffic_bytes:rate1m${ps})`)], "Bps"),
    ts("Worker exchange with the PS",
      "Bytes per second each worker exchanges with all PS of its job; a worker far below the others is a straggler (TrainscopeStragglerWorker).",
      { h: 10, w: 12, x: 12, y: 26 },
      [q(`training_job_pod:trainscope_worker_ps_traffic_bytes:rate1m${ps}`, "{{pod}}"),
        q(`training_job:trainscope_worker_ps_traffic_bytes:median_rate1m${ps}`, "median of {{training_job}}")], "Bps"),
    row("Pods", 36),
    ts("CPU usage", "CPU cores used per pod (cgroup).",
      { h: 8, w: 8, x: 0, y: 37 },
      [q(`sum ${by("namespace, pod")} (rate(trainscope_pod_cpu_usage_seconds_total${j}[$__rate_interval])${ON_NODE})`, "{{pod}}")], "none"),
    ts("CPU throttling", "Fraction of CFS periods in which the pod was throttled (TrainscopeCPUThrottled at 25%).",
      { h: 8, w: 8, x: 8, y: 37 },
      [q(`sum ${by("namespace, pod")} (rate(trainscope_pod_cpu_throttled_periods_total${j}[$__rate_interval])${ON_NODE}) / (sum ${by("namespace, pod")} (rate(trainscope_pod_cpu_periods_total${j}[$__rate_interval])) > 0)`, "{{pod}}")],
      "percentunit", { min: 0, max: 1 }),
    ts("CPU usage / limit", "CPU used over the pod's CPU limit (pods with a limit).",
      { h: 8, w: 8, x: 16, y: 37 },
      [q(`sum ${by("namespace, pod")} (rate(trainscope_pod_cpu_usage_seconds_total${j}[$__rate_interval])${ON_NODE}) / sum ${by("namespace, pod")} (trainscope_pod_cpu_limit_cores${j})`, "{{pod}}")],
      "percentunit", { min: 0 }),
    ts("Memory working set", "Working set per pod (what the kubelet evicts and the OOM killer acts on).",
      { h: 8, w: 8, x: 0, y: 45 },
      [q(`sum ${by("namespace, pod")} (trainscope_pod_memory_working_set_bytes${j}${ON_NODE})`, "{{pod}}")], "bytes"),
    ts("Memory working set / limit", "Working set over the memory limit (pods with a limit).",
      { h: 8, w: 8, x: 8, y: 45 },
      [q(`sum ${by("namespace, pod")} (trainscope_pod_memory_working_set_bytes${j}${ON_NODE}) / sum ${by("namespace, pod")} (trainscope_pod_memory_limit_bytes${j})`, "{{pod}}")],
      "percentunit", { min: 0, max: 1 }),
    ts("Network receive / transmit", "Bytes per second per pod (all interfaces but lo); transmit drawn negative.",
      { h: 8, w: 8, x: 16, y: 45 },
      [q(`sum ${by("namespace, pod")} (rate(trainscope_pod_network_receive_bytes_total${j}[$__rate_interval])${ON_NODE})`, "{{pod}} rx"),
        q(`-sum ${by("namespace, pod")} (rate(trainscope_pod_network_transmit_bytes_total${j}[$__rate_interval])${ON_NODE})`, "{{pod}} tx")], "Bps"),
    row("Diagnoses", 53),
    tablePanel("Active diagnoses",
      "Diagnoses the agents hold now (trainscope_diagnosis_active); details and recommendations: the agent's /api/v1/report or `trainscope report --prometheus`.",
      { h: 8, w: 24, x: 0, y: 54 },
      [tableQuery(`max ${by("kind, severity, namespace, training_job, pod, node")} (trainscope_diagnosis_active${j})`)], "none",
      { Time: true, Value: true }),
    // Each agent counts the jobs it holds pods of: max over the agents.
    row("Goodput", 62),
    ts("Goodput per job",
      "1 - lost / all seconds since the agents first saw the job (trainscope_job_goodput_ratio, max over the agents holding its pods). docs/diagnosis.md, \"Goodput and lost time\".",
      { h: 8, w: 12, x: 0, y: 63 },
      [q(`max ${by("namespace, training_job")} (trainscope_job_goodput_ratio${j})`, "{{namespace}}/{{training_job}}")],
      "percentunit", { min: 0, max: 1 }),
    ts("Time lost by cause",
      "Share of the job's time lost to each cause (rate of trainscope_job_lost_seconds_total): stalled, restarting, or a diagnosis's cost while the job progresses.",
      { h: 8, w: 12, x: 12, y: 63 },
      [q(`max ${by("namespace, training_job, cause")} (rate(trainscope_job_lost_seconds_total${j}[$__rate_interval]))`, "{{training_job}} {{cause}}")],
      "percentunit", { min: 0 }),
  ];
  return buildDashboard({
    uid: "trainscope-training-job", title: "Trainscope / Training job",
    description: "One training job: training speed and how it scales with workers, parameter-server traffic balance, worker<->PS traffic, per-pod resources and active diagnoses.",
    variables: variables(["namespace", "training_job", "node"]), items,
  });
}

// ------------------------------------------------------ cluster overview
function clusterOverview() {
  const nodeSel = `{${AGENT}, node=~"$node"}`;
  const jobs = `{${SEL_POD}}`;
  const recJobs = `{${REC_POD}}`;
  const items = [
    row("Training jobs", 0),
    tablePanel("Jobs with active diagnoses", "Active diagnoses per job and kind, all agents.",
      { h: 9, w: 12, x: 0, y: 1 },
      [tableQuery(`count ${by("namespace, training_job, kind, severity")} (trainscope_diagnosis_active${jobs})`)], "none"),
    tablePanel("PS balance per job", "Largest PS traffic share and skew (max/mean) per job, cluster-wide.",
      { h: 9, w: 12, x: 12, y: 1 },
      [tableQuery(`max ${by("namespace, training_job")} (training_job_pod:trainscope_ps_traffic_share:ratio${recJobs})`),
        tableQuery(`training_job:trainscope_ps_traffic_skew:ratio${recJobs}`)], "none"),
    statPanel("Active diagnoses by kind", "Number of active diagnoses per kind.",
      { h: 5, w: 12, x: 0, y: 10 },
      [q(`count ${by("kind")} (trainscope_diagnosis_active${jobs})`, "{{kind}}")], "none"),
    statPanel("Training pods per node", "Pods of a training job per node.",
      { h: 5, w: 12, x: 12, y: 10 },
      [q(`count ${by("node")} (trainscope_pod_info{${SEL_POD}, training_job!="", node=~"$node"})`, "{{node}}")], "none"),
    row("Nodes", 15),
    barGauge("Nodes by network use", "Bytes per second through each node's physical NICs, both directions.",
      { h: 9, w: 12, x: 0, y: 16 },
      [instant(`sort_desc(sum ${by("node")} (rate(trainscope_node_network_receive_bytes_total${nodeSel}[$__rate_interval])) + sum ${by("node")} (rate(trainscope_node_network_transmit_bytes_total${nodeSel}[$__rate_interval])))`, "{{node}}")], "Bps"),
    barGauge("Nodes by CPU use", "Busy fraction of each node's CPUs.",
      { h: 9, w: 12, x: 12, y: 16 },
      [instant(`sort_desc(sum ${by("node")} (rate(trainscope_node_cpu_usage_seconds_total${nodeSel}[$__rate_interval])) / sum ${by("node")} (${nodeCpus(nodeSel)}))`, "{{node}}")],
      "percentunit", { min: 0, max: 1 }),
    ts("Node network receive / transmit", "Per node and NIC; transmit drawn negative.",
      { h: 8, w: 12, x: 0, y: 25 },
      [q(`rate(trainscope_node_network_receive_bytes_total${nodeSel}[$__rate_interval])`, "{{node}} {{device}} rx"),
        q(`-rate(trainscope_node_network_transmit_bytes_total${nodeSel}[$__rate_interval])`, "{{node}} {{device}} tx")], "Bps"),
    ts("Node memory available", "MemAvailable over MemTotal per node.",
      { h: 8, w: 12, x: 12, y: 25 },
      [q(`trainscope_node_memory_available_bytes${nodeSel} / trainscope_node_memory_total_bytes${nodeSel}`, "{{node}}")],
      "percentunit", { min: 0, max: 1 }),
    row("GPUs", 33),
    ts("GPU utilization by pod", "Summed SM utilization of each container's processes per GPU (NVML).",
      { h: 8, w: 12, x: 0, y: 34 },
      [q(`max ${by("namespace, pod, gpu")} (trainscope_pod_gpu_utilization_ratio${jobs}${ON_NODE})`, "{{pod}} gpu{{gpu}}")],
      "percentunit", { min: 0, max: 1 }),
    ts("GPU memory by pod", "GPU memory used by each container's processes.",
      { h: 8, w: 12, x: 12, y: 34 },
      [q(`sum ${by("namespace, pod, gpu")} (trainscope_pod_gpu_memory_used_bytes${jobs}${ON_NODE})`, "{{pod}} gpu{{gpu}}")], "bytes"),
    // The goodput recording rules (alerts.src.yaml): max over the agents that
    // each count a job, then sums over jobs.
    row("Goodput", 42),
    statPanel("Cluster goodput (1 h)", "1 - time lost / all training-job time over the last hour, all jobs (cluster:trainscope_job_goodput:ratio1h).",
      { h: 8, w: 6, x: 0, y: 43 },
      [q(`cluster:trainscope_job_goodput:ratio1h{${CM}}`, "goodput")], "percentunit", { min: 0, max: 1 }),
    barGauge("Time lost by cause (1 h)", "Hours of training-job time lost in the last hour per cause, summed over the selected jobs.",
      { h: 8, w: 9, x: 6, y: 43 },
      [instant(`sort_desc(sum ${by("cause")} (training_job_cause:trainscope_job_lost_seconds:increase1h${recJobs})) / 3600`, "{{cause}}")], "h"),
    barGauge("Goodput per job", "Each job's goodput since the agents first saw it, lowest first.",
      { h: 8, w: 9, x: 15, y: 43 },
      [instant(`sort(training_job:trainscope_job_goodput:ratio_max${recJobs})`, "{{namespace}}/{{training_job}}")],
      "percentunit", { min: 0, max: 1 }),
  ];
  return buildDashboard({
    uid: "trainscope-cluster-overview", title: "Trainscope / Cluster overview",
    description: "All training jobs and nodes: active diagnoses, PS balance, node network and CPU, GPU use by pod.",
    variables: variables(["namespace", "training_job", "node"]), items,
  });
}

// ---------------------------------------------------------- agent health
function agentHealth() {
  const a = `{${AGENT}}`;
  const hide = (...cols) => Object.fromEntries(["Time", ...cols].map((c) => [c, true]));
  const items = [
    row("Agents", 0),
    statPanel("Agents up", "Agents Prometheus scrapes successfully / all agent targets.",
      { h: 5, w: 6, x: 0, y: 1 },
      [q(`sum by (${CL}) (up${a})`, "up"), q(`count by (${CL}) (up${a})`, "targets")], "none"),
    tablePanel("Collector status", "Each collector of each agent: 1 when its last run succeeded, 0 when it failed or had nothing to collect (gpu is 0 on nodes without GPUs).",
      { h: 5, w: 18, x: 6, y: 1 },
      [tableQuery(`sort(trainscope_collector_up${a}${AGENT_NODE})`)], "none", hide("__name__", "job")),
    ts("Collector up", "1 when the collector's last run succeeded.",
      { h: 8, w: 12, x: 0, y: 6 },
      [q(`trainscope_collector_up${a}${AGENT_NODE}`, "{{node}} {{collector}}")], "none", { min: 0, max: 1 }),
    ts("Collector duration", "Wall time of each collector's last run.",
      { h: 8, w: 12, x: 12, y: 6 },
      [q(`trainscope_collector_duration_seconds${a}${AGENT_NODE}`, "{{node}} {{collector}}")], "s"),
    row("Cost", 14),
    ts("Agent CPU", "CPU cores used by the agent process and by its sampling thread.",
      { h: 8, w: 8, x: 0, y: 15 },
      [q(`rate(process_cpu_seconds_total${a}[$__rate_interval])${AGENT_NODE}`, "{{node}} process"),
        q(`rate(trainscope_sampler_cpu_seconds_total${a}[$__rate_interval])${AGENT_NODE}`, "{{node}} sampler")], "none"),
    ts("Agent memory", "Resident memory of the agent (the DaemonSet limit is 128Mi).",
      { h: 8, w: 8, x: 8, y: 15 },
      [q(`process_resident_memory_bytes${a}${AGENT_NODE}`, "{{node}}")], "bytes"),
    ts("Scrape cost", "Wall time of the previous /metrics render, and Prometheus's scrape duration.",
      { h: 8, w: 8, x: 16, y: 15 },
      [q(`trainscope_render_duration_seconds${a}${AGENT_NODE}`, "{{node}} render"),
        q(`scrape_duration_seconds${a}${AGENT_NODE}`, "{{node}} scrape")], "s"),
    row("Flows", 23),
    ts("BPF flow map fill", "Entries in the in-kernel flow map over its capacity (--flow-map-entries); eBPF mode only.",
      { h: 8, w: 8, x: 0, y: 24 },
      [q(`(trainscope_flows_map_entries${a} / trainscope_flows_map_max_entries${a})${AGENT_NODE}`, "{{node}}")],
      "percentunit", { min: 0, max: 1 }),
    ts("Flow records lost", "Per second: flow map LRU evictions and insert failures (eBPF), kernel ring and interface drops (pcap). Anything above 0 undercounts per-peer bytes.",
      { h: 8, w: 8, x: 8, y: 24 },
      [q(
        `sum ${by("node, cause")} (` +
        `label_replace(rate(trainscope_flows_map_evictions_total${a}[$__rate_interval]), "cause", "bpf_map_eviction", "", "")` +
        ` or label_replace(rate(trainscope_flows_map_insert_failures_total${a}[$__rate_interval]), "cause", "bpf_map_insert_failure", "", "")` +
        ` or label_replace(rate(trainscope_flows_pcap_kernel_drops_total${a}[$__rate_interval]), "cause", "pcap_kernel_drop", "", "")` +
        ` or label_replace(rate(trainscope_flows_pcap_interface_drops_total${a}[$__rate_interval]), "cause", "pcap_interface_drop", "", "")` +
        `${AGENT_NODE})`, "{{node}} {{cause}}")], "pps"),
    ts("Unattributed bytes", "Bytes counted for cgroups or addresses the pod table does not know (yet).",
      { h: 8, w: 8, x: 16, y: 24 },
      [q(`rate(trainscope_flows_unattributed_bytes_total${a}[$__rate_interval])${AGENT_NODE}`, "{{node}}")], "Bps"),
    row("Discovery and sampling", 32),
    ts("Discovery ready", "1 once discovery has listed the node's pods.",
      { h: 8, w: 8, x: 0, y: 33 },
      [q(`trainscope_discovery_ready${a}${AGENT_NODE}`, "{{node}} {{mode}}")], "none", { min: 0, max: 1 }),
    ts("Discovery errors", "Failed list/watch/read attempts per second.",
      { h: 8, w: 8, x: 8, y: 33 },
      [q(`rate(trainscope_discovery_errors_total${a}[$__rate_interval])${AGENT_NODE}`, "{{node}} {{mode}}")], "none"),
    ts("Sample age", "Seconds since the snapshot the agent serves was taken (about --interval when healthy).",
      { h: 8, w: 8, x: 16, y: 33 },
      [q(`(time() - trainscope_last_sample_timestamp_seconds${a})${AGENT_NODE}`, "{{node}}")], "s"),
    tablePanel("Agent versions", "trainscope_build_info per agent.",
      { h: 6, w: 24, x: 0, y: 41 },
      [tableQuery(`trainscope_build_info${a}${AGENT_NODE}`)], "none", hide("Value", "__name__")),
  ];
  return buildDashboard({
    uid: "trainscope-agent-health", title: "Trainscope / Agent health",
    description: "The Trainscope agents themselves: collectors, cost per scrape and per sample, flow capture losses, discovery.",
    variables: variables(["node"]), items,
  });
}

// ---------------------------------------------------------- rules
// alerts.src.yaml with the mixin settings filled in: a plain rules file,
// comments kept. %(runbookURL)s takes the name of the alert it belongs to.
function renderRules() {
  const src = readFileSync(join(root, "dashboards/alerts.src.yaml"), "utf8");
  const body = src.slice(src.indexOf("\ngroups:\n") + 1);
  let alert = null;
  const lines = body.split("\n").map((line) => {
    const m = line.match(/^\s*- alert: (\S+)/);
    if (m) alert = m[1];
    if (line.includes("%(runbookURL)s") && !alert) throw new Error("runbook_url outside an alert in alerts.src.yaml");
    return line
      .replaceAll("%(selector)s", SEL)
      .replaceAll("%(clusterLabel)s", CL)
      .replaceAll("%(runbookURL)s", () => config.runbookURLPattern.replace("%s", alert.toLowerCase()));
  });
  const left = lines.join("\n").match(/%\([a-zA-Z]+\)s/);
  if (left) throw new Error(`alerts.src.yaml: unknown placeholder ${left[0]}`);
  return `# GENERATED from dashboards/alerts.src.yaml by \`node dashboards/generate.mjs\` with
# the settings of ${configPath ? configPath : "dashboards/mixin.yaml"}; do not edit (docs/dashboards.md, "Rules").
#
#   promtool check rules dashboards/alerts.yaml
#   promtool test rules dashboards/alerts_test.yaml
#
# Scrape job selector: ${SEL}; cluster label: ${CL}.
` + lines.join("\n");
}

function prometheusRule(rulesText) {
  const rules = YAML.parse(rulesText);
  const doc = {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PrometheusRule",
    metadata: {
      name: "trainscope",
      namespace: "trainscope",
      labels: { "app.kubernetes.io/name": "trainscope-agent", prometheus: "k8s", role: "alert-rules" },
    },
    spec: { groups: rules.groups },
  };
  return "# GENERATED from dashboards/alerts.src.yaml by `node dashboards/generate.mjs`; do not edit.\n" +
    YAML.stringify(doc, { lineWidth: 0, blockQuote: "literal" });
}

const rulesText = renderRules();
const dashboards = {
  "trainscope-training-job.json": JSON.stringify(trainingJob(), null, 2) + "\n",
  "trainscope-cluster-overview.json": JSON.stringify(clusterOverview(), null, 2) + "\n",
  "trainscope-agent-health.json": JSON.stringify(agentHealth(), null, 2) + "\n",
};
const outputs = {};
if (outDir) {
  // Your settings: everything in one directory, nothing in the repository.
  mkdirSync(outDir, { recursive: true });
  outputs["alerts.yaml"] = rulesText;
  outputs["prometheusrule.yaml"] = prometheusRule(rulesText);
  Object.assign(outputs, dashboards);
} else {
  outputs["dashboards/alerts.yaml"] = rulesText;
  outputs["daemonset/base/prometheusrule.yaml"] = prometheusRule(rulesText);
  for (const [name, text] of Object.entries(dashboards)) {
    outputs[`dashboards/${name}`] = text;
    // kustomize's configMapGenerator reads files below its own directory only.
    outputs[`daemonset/components/grafana-dashboards/${name}`] = text;
  }
}

const check = process.argv.includes("--check");
let stale = 0;
for (const [rel, text] of Object.entries(outputs)) {
  const path = join(outDir ?? root, rel);
  const old = existsSync(path) ? readFileSync(path, "utf8") : null;
  if (old === text) continue;
  if (check) {
    console.error(`generate: ${rel} is out of date; run: node dashboards/generate.mjs`);
    stale++;
  } else {
    writeFileSync(path, text);
    console.log(`generate: wrote ${join(outDir ?? "", rel)}`);
  }
}
process.exit(stale ? 1 : 0);
