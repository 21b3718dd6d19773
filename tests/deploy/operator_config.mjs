// The Prometheus configuration the Prometheus Operator generates for the
// shipped ServiceMonitor or PodMonitor, for tests without an API server.
//
// The scrape job is what the Operator writes (pkg/prometheus/promcfg.go;
// the deploy.operator_real_* tests compare these relabel_configs with the
// real Operator's, operator_real.mjs): job_name
// serviceMonitor/<ns>/<name>/<i>, honor_labels, the relabel_configs that
// turn kubernetes_sd's __meta_* labels into job, namespace, service, pod,
// container, endpoint, then the endpoint's own relabelings and the
// sharding step. Only kubernetes_sd_configs is replaced: by
// static targets carrying the __meta_kubernetes_* labels kubernetes_sd would
// give the agent's pods, derived from the rendered Service and DaemonSet.
// A monitor field this generator does not implement fails loudly rather
// than being ignored, so the e2e cannot pass on settings it never applied.
//
//   node operator_config.mjs --variant daemonset --node node-a=127.0.0.1:9001 \
//        [--node node-b=...] --interval 1s --config-out prometheus.yml --rules-out rules.yaml
//   (--components podmonitor instead of --variant: the base with those components;
//    --secret-dir DIR: the monitor's Secret references as files DIR/<name>/<key>;
//    --max-for 1m: alerts' `for` longer than 1m cut to 1m)
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { render, renderKustomization, find } from "./render.mjs";

const sanitize = (name) => name.replace(/[^a-zA-Z0-9_]/g, "_");
const SUPPORTED_SPEC = new Set(["jobLabel", "selector", "endpoints", "podMetricsEndpoints", "namespaceSelector"]);
const SUPPORTED_ENDPOINT = new Set(["port", "path", "honorLabels", "interval", "scrapeTimeout", "relabelings", "scheme",
  "tlsConfig", "authorization"]);

// Secret references (Operator: {name, key} in the monitor's namespace) as
// files: the Operator copies them into the Prometheus pod; here they are
// read from SECRET_DIR/<name>/<key>, which the test writes.
function secretFile(ref, secretDir, what) {
  if (!ref?.name || !ref?.key) throw new Error(`${what}: want a Secret reference {name, key}`);
  if (!secretDir) throw new Error(`${what}: Secret ${ref.name} needs --secret-dir`);
  return join(secretDir, ref.name, ref.key);
}
function tlsConfig(t, secretDir) {
  const out = {};
  for (const [k, v] of Object.entries(t)) {
    if (k === "ca") out.ca_file = secretFile(v.secret, secretDir, "tlsConfig.ca");
    else if (k === "serverName") out.server_name = v;
    else if (k === "insecureSkipVerify") out.insecure_skip_verify = v;
    else throw new Error(`tlsConfig field ${k} is not implemented by operator_config.mjs`);
  }
  return out;
}
function authorization(a, secretDir) {
  for (const k of Object.keys(a)) {
    if (!["type", "credentials"].includes(k)) throw new Error(`authorization field ${k} is not implemented by operator_config.mjs`);
  }
  return { type: a.type ?? "Bearer", credentials_file: secretFile(a.credentials, secretDir, "authorization.credentials") };
}

// The endpoint's relabelings as Prometheus relabel_configs (the CRD's
// camelCase fields to Prometheus's snake_case).
function relabelConfig(r) {
  const out = {};
  for (const [k, v] of Object.entries(r)) {
    const key = { sourceLabels: "source_labels", targetLabel: "target_label" }[k] ?? k;
    if (!["sourceLabels", "targetLabel", "regex", "replacement", "action", "separator", "modulus"].includes(k)) {
      throw new Error(`relabeling field ${k} is not implemented by operator_config.mjs`);
    }
    out[key] = v;
  }
  return out;
}

function checkSupported(monitor, endpoint) {
  for (const k of Object.keys(monitor.spec)) {
    if (!SUPPORTED_SPEC.has(k)) throw new Error(`${monitor.kind} field spec.${k} is not implemented by operator_config.mjs`);
  }
  for (const k of Object.keys(endpoint)) {
    if (!SUPPORTED_ENDPOINT.has(k)) throw new Error(`${monitor.kind} endpoint field ${k} is not implemented by operator_config.mjs`);
  }
  if (endpoint.metricRelabelings) throw new Error("metricRelabelings are not implemented by operator_config.mjs");
  const sel = monitor.spec.selector;
  if (sel.matchExpressions?.length) throw new Error("selector.matchExpressions is not implemented by operator_config.mjs");
}

// The keep rule of a matchLabels selector, as the Operator writes it.
function selectorKeeps(matchLabels, metaPrefix) {
  return Object.entries(matchLabels).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => ({
    action: "keep",
    source_labels: [`${metaPrefix}_label_${sanitize(k)}`, `${metaPrefix}_labelpresent_${sanitize(k)}`],
    regex: `(${v});true`,
  }));
}

function serviceMonitorJob(sm, i, endpoint) {
  const ns = sm.metadata.namespace;
  const rc = [
    { source_labels: ["job"], target_label: "__tmp_prometheus_job_name" },
    ...selectorKeeps(sm.spec.selector.matchLabels ?? {}, "__meta_kubernetes_service"),
    { action: "keep", source_labels: ["__meta_kubernetes_endpoint_port_name"], regex: endpoint.port },
    { source_labels: ["__meta_kubernetes_endpoint_address_target_kind", "__meta_kubernetes_endpoint_address_target_name"],
      separator: ";", regex: "Node;(.*)", replacement: "${1}", target_label: "node" },
    { source_labels: ["__meta_kubernetes_endpoint_address_target_kind", "__meta_kubernetes_endpoint_address_target_name"],
      separator: ";", regex: "Pod;(.*)", replacement: "${1}", target_label: "pod" },
    { source_labels: ["__meta_kubernetes_namespace"], target_label: "namespace" },
    { source_labels: ["__meta_kubernetes_service_name"], target_label: "service" },
    { source_labels: ["__meta_kubernetes_pod_name"], target_label: "pod" },
    { source_labels: ["__meta_kubernetes_pod_container_name"], target_label: "container" },
    { action: "drop", source_labels: ["__meta_kubernetes_pod_phase"], regex: "(Failed|Succeeded)" },
    { source_labels: ["__meta_kubernetes_service_name"], target_label: "job", replacement: "${1}" },
  ];
  if (sm.spec.jobLabel) {
    rc.push({ source_labels: [`__meta_kubernetes_service_label_${sanitize(sm.spec.jobLabel)}`],
      target_label: "job", regex: "(.+)", replacement: "${1}" });
  }
  rc.push({ target_label: "endpoint", replacement: endpoint.port });
  return { job_name: `serviceMonitor/${ns}/${sm.metadata.name}/${i}`, relabel_configs: rc };
}

function podMonitorJob(pm, i, endpoint) {
  const ns = pm.metadata.namespace;
  const rc = [
    { source_labels: ["job"], target_label: "__tmp_prometheus_job_name" },
    // A PodMonitor drops finished pods first (a ServiceMonitor later).
    { action: "drop", source_labels: ["__meta_kubernetes_pod_phase"], regex: "(Failed|Succeeded)" },
    ...selectorKeeps(pm.spec.selector.matchLabels ?? {}, "__meta_kubernetes_pod"),
    { action: "keep", source_labels: ["__meta_kubernetes_pod_container_port_name"], regex: endpoint.port },
    { source_labels: ["__meta_kubernetes_namespace"], target_label: "namespace" },
    { source_labels: ["__meta_kubernetes_pod_container_name"], target_label: "container" },
    { source_labels: ["__meta_kubernetes_pod_name"], target_label: "pod" },
    { target_label: "job", replacement: `${ns}/${pm.metadata.name}` },
  ];
  if (pm.spec.jobLabel) {
    rc.push({ source_labels: [`__meta_kubernetes_pod_label_${sanitize(pm.spec.jobLabel)}`],
      target_label: "job", regex: "(.+)", replacement: "${1}" });
  }
  rc.push({ target_label: "endpoint", replacement: endpoint.port });
  return { job_name: `podMonitor/${ns}/${pm.metadata.name}/${i}`, relabel_configs: rc };
}

// The __meta_kubernetes_* labels kubernetes_sd gives each agent pod's
// endpoint (role endpoints for a ServiceMonitor, role pod for a PodMonitor).
function discoveredTargets(objects, monitor, endpoint, nodes) {
  const ds = find(objects, "DaemonSet", "trainscope-agent");
  const ns = ds.metadata.namespace;
  const podLabels = ds.spec.template.metadata.labels;
  const podMeta = (node, container, portName) => {
    const m = {
      __meta_kubernetes_namespace: ns,
      __meta_kubernetes_pod_name: `${ds.metadata.name}-${node.name}`,
      __meta_kubernetes_pod_node_name: node.name,
      __meta_kubernetes_pod_phase: "Running",
      __meta_kubernetes_pod_ready: "true",
      __meta_kubernetes_pod_container_name: container,
      __meta_kubernetes_pod_container_port_name: portName,
    };
    for (const [k, v] of Object.entries(podLabels)) {
      m[`__meta_kubernetes_pod_label_${sanitize(k)}`] = v;
      m[`__meta_kubernetes_pod_labelpresent_${sanitize(k)}`] = "true";
    }
    return m;
  };
  const containerWithPort = (name) => {
    const c = ds.spec.template.spec.containers.find((x) => (x.ports ?? []).some((p) => p.name === name));
    if (!c) throw new Error(`no container of the DaemonSet has a port named ${name}`);
    return c.name;
  };
  if (monitor.kind === "PodMonitor") {
    const container = containerWithPort(endpoint.port);
    return nodes.map((node) => ({ targets: [node.address], labels: podMeta(node, container, endpoint.port) }));
  }
  // role endpoints: the Services the monitor selects in its namespace.
  const services = objects.filter((o) => o.kind === "Service" && o.metadata.namespace === monitor.metadata.namespace);
  const out = [];
  for (const svc of services) {
    for (const port of svc.spec.ports) {
      const container = containerWithPort(String(port.targetPort));
      for (const node of nodes) {
        const m = {
          ...podMeta(node, container, String(port.targetPort)),
          __meta_kubernetes_service_name: svc.metadata.name,
          __meta_kubernetes_endpoint_port_name: port.name,
          __meta_kubernetes_endpoint_port_protocol: port.protocol ?? "TCP",
          __meta_kubernetes_endpoint_ready: "true",
          __meta_kubernetes_endpoint_address_target_kind: "Pod",
          __meta_kubernetes_endpoint_address_target_name: `${ds.metadata.name}-${node.name}`,
          __meta_kubernetes_endpoint_node_name: node.name,
        };
        for (const [k, v] of Object.entries(svc.metadata.labels ?? {})) {
          m[`__meta_kubernetes_service_label_${sanitize(k)}`] = v;
          m[`__meta_kubernetes_service_labelpresent_${sanitize(k)}`] = "true";
        }
        out.push({ targets: [node.address], labels: m });
      }
    }
  }
  return out;
}

// The Operator ends every job with its sharding step: keep the targets of
// this shard (the config reloader puts the pod's shard, 0 of 1, for
// $(SHARD)). Checked against the real Operator by operator_real.mjs.
const SHARDING = [
  { source_labels: ["__address__", "__tmp_hash"], target_label: "__tmp_hash", regex: "(.+);", action: "replace" },
  { source_labels: ["__tmp_hash"], target_label: "__tmp_hash", modulus: 1, action: "hashmod" },
  { source_labels: ["__tmp_hash", "__tmp_disable_sharding"], regex: "0;|.+;.+", action: "keep" },
];

// Every scrape job of `monitor` with the static stand-in for discovery.
export function scrapeJobs(objects, monitor, nodes, secretDir) {
  const endpoints = monitor.spec.endpoints ?? monitor.spec.podMetricsEndpoints;
  return endpoints.map((endpoint, i) => {
    checkSupported(monitor, endpoint);
    const job = monitor.kind === "PodMonitor" ? podMonitorJob(monitor, i, endpoint) : serviceMonitorJob(monitor, i, endpoint);
    job.relabel_configs.push(...(endpoint.relabelings ?? []).map(relabelConfig), ...SHARDING);
    return {
      job_name: job.job_name,
      honor_labels: endpoint.honorLabels ?? false,
      // Replaces: kubernetes_sd_configs: [{role: endpoints|pod, namespaces: {names: [ns]}}]
      static_configs: discoveredTargets(objects, monitor, endpoint, nodes),
      ...(endpoint.interval ? { scrape_interval: endpoint.interval } : {}),
      ...(endpoint.scrapeTimeout ? { scrape_timeout: endpoint.scrapeTimeout } : {}),
      metrics_path: endpoint.path ?? "/metrics",
      scheme: endpoint.scheme ?? "http",
      ...(endpoint.tlsConfig ? { tls_config: tlsConfig(endpoint.tlsConfig, secretDir) } : {}),
      ...(endpoint.authorization ? { authorization: authorization(endpoint.authorization, secretDir) } : {}),
      relabel_configs: job.relabel_configs,
    };
  });
}

// The whole prometheus.yml: the Operator's global section, the PrometheusRule
// files, the monitor's jobs. `interval` overrides the endpoint's interval
// (tests scrape faster than the shipped 15 s).
export function prometheusConfig(objects, { nodes, interval, ruleFiles, secretDir }) {
  const monitors = objects.filter((o) => o.kind === "ServiceMonitor" || o.kind === "PodMonitor");
  if (monitors.length !== 1) throw new Error(`want one ServiceMonitor or PodMonitor, found ${monitors.length}`);
  const jobs = scrapeJobs(objects, monitors[0], nodes, secretDir);
  for (const j of jobs) {
    if (interval) {
      j.scrape_interval = interval;
      j.scrape_timeout = interval;
    }
  }
  return {
    global: {
      scrape_interval: interval ?? "30s",
      evaluation_interval: interval ?? "30s",
      external_labels: { prometheus: "monitoring/k8s", prometheus_replica: "prometheus-k8s-0" },
    },
    rule_files: ruleFiles,
    scrape_configs: jobs,
  };
}

const SECONDS_PER = { s: 1, m: 60, h: 3600 };
function seconds(duration) {
  const m = /^(\d+)([smh])$/.exec(duration);
  if (!m) throw new Error(`cannot read the duration "${duration}" (want e.g. 30s, 5m, 1h)`);
  return Number(m[1]) * SECONDS_PER[m[2]];
}

// The rule file the Operator mounts for a PrometheusRule: its spec. With
// maxFor, every alert's `for` longer than it is cut to it, so an end-to-end
// test sees an alert fire in minutes (promtool's tests hold the shipped
// values).
export function ruleFile(objects, maxFor) {
  const groups = structuredClone(find(objects, "PrometheusRule").spec.groups);
  if (maxFor) {
    for (const rule of groups.flatMap((g) => g.rules)) {
      if (rule.for && seconds(rule.for) > seconds(maxFor)) rule.for = maxFor;
    }
  }
  return { groups };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = { node: [] };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, "");
    if (k === "node") args.node.push(argv[i + 1]);
    else args[k] = argv[i + 1];
  }
  try {
    // --components a,b: daemonset/base with those components (e.g. podmonitor).
    const objects = args.components
      ? renderKustomization(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: ["@REPO@/daemonset/base"]
components: [${args.components.split(",").map((c) => `"@REPO@/daemonset/components/${c}"`).join(", ")}]
`)
      : render(args.variant ?? "daemonset");
    const nodes = args.node.map((s) => {
      const [name, address] = s.split("=");
      return { name, address };
    });
    if (!nodes.length) throw new Error("give at least one --node NAME=HOST:PORT");
    writeFileSync(args["rules-out"], YAML.stringify(ruleFile(objects, args["max-for"]), { lineWidth: 0 }));
    writeFileSync(args["config-out"], YAML.stringify(
      prometheusConfig(objects, { nodes, interval: args.interval, ruleFiles: [args["rules-out"]], secretDir: args["secret-dir"] }),
      { lineWidth: 0 }));
    console.log(`operator_config: ${args["config-out"]} (${args.components ?? args.variant ?? "daemonset"}, ${nodes.length} targets)`);
  } catch (e) {
    console.error(`operator_config: ${e.message}`);
    process.exit(1);
  }
}
