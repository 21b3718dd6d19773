// The API side of operator_real.sh: what the test puts into the real API
// server beside the shipped manifests, what it reads back from the real
// Prometheus Operator, and the checks on the real Prometheus.
//
//   node operator_real.mjs prepare --kubeconfig K --stack kube-prometheus|kube-prometheus-stack
//        --manifests M.yaml --pod-ip IP --node NODE --ca CA --out DIR
//     the cluster side a kubelet, the endpoints controller and the stack's
//     own install would make (agent pod and its status, Endpoints and
//     EndpointSlice, the Prometheus CR and its service account), a copy of
//     the PrometheusRule that the Operator must reject; then waits for the
//     Operator's Secret prometheus-<name> and rule ConfigMaps and writes
//     DIR/prometheus.yml and DIR/rules/*.yaml from them.
//   node operator_real.mjs check --prometheus URL --agent URL --config DIR/prometheus.yml
//     the series and rules in the real Prometheus.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import YAML from "yaml";
import { scrapeJobs } from "./operator_config.mjs";

const args = Object.fromEntries(process.argv.slice(3).reduce((acc, a, i, all) =>
  (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const t0 = Date.now();
const elapsed = () => ((Date.now() - t0) / 1000).toFixed(1);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let failed = 0;
const ok = (cond, what) => {
  if (!cond) failed++;
  console.log(`operator-real ${cond ? "ok  " : "FAIL"} ${what}`);
  return cond;
};

// The two stacks as their installs define them: the Prometheus object's
// name and selectors, and what its service account may read.
const STACKS = {
  "kube-prometheus": {
    name: "k8s",
    serviceAccount: "prometheus-k8s",
    selector: {},
    // kube-prometheus's ClusterRole for prometheus-k8s: nodes/metrics and
    // /metrics only; pods and endpoints come from a Role per namespace
    // (the overlay ships the one for trainscope).
    clusterRules: [
      { apiGroups: [""], resources: ["nodes/metrics"], verbs: ["get"] },
      { nonResourceURLs: ["/metrics"], verbs: ["get"] },
    ],
  },
  "kube-prometheus-stack": {
    name: "kube-prometheus-stack-prometheus",
    serviceAccount: "kube-prometheus-stack-prometheus",
    selector: { matchLabels: { release: "kube-prometheus-stack" } },
    // The chart's ClusterRole (templates/prometheus/clusterrole.yaml).
    clusterRules: [
      { apiGroups: [""], resources: ["nodes", "nodes/metrics", "services", "endpoints", "pods"],
        verbs: ["get", "list", "watch"] },
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["networking.k8s.io"], resources: ["ingresses"], verbs: ["get", "list", "watch"] },
      { nonResourceURLs: ["/metrics", "/metrics/cadvisor"], verbs: ["get"] },
    ],
  },
};
const MONITORING = "monitoring";
const AGENT_PORT = 9476;
const INVALID_RULE = "trainscope-invalid";

function kubectl(argv, input) {
  const r = spawnSync("kubectl", ["--kubeconfig", args.kubeconfig, ...argv],
    { encoding: "utf8", input, timeout: 60000 });
  if (r.status !== 0) throw new Error(`kubectl ${argv.join(" ")}: ${r.stderr || r.error}`);
  return r.stdout;
}
const getJson = (argv) => JSON.parse(kubectl([...argv, "-o", "json"]));
const apply = (objects) => kubectl(["apply", "--server-side", "-f", "-"],
  objects.map((o) => YAML.stringify(o)).join("---\n"));

async function until(what, limitS, fn) {
  const end = Date.now() + limitS * 1000;
  let last = "";
  for (;;) {
    try {
      const r = await fn();
      if (r !== undefined && r !== false && typeof r !== "string") return r;
      if (r && r !== last) console.log(`operator-real [${elapsed()}s] ${what}: ${r}`);
      last = r || last;
    } catch (e) {
      if (e.message !== last) console.log(`operator-real [${elapsed()}s] ${what}: ${e.message}`);
      last = e.message;
    }
    if (Date.now() > end) throw new Error(`${what}: not reached within ${limitS}s (last: ${last})`);
    await sleep(1000);
  }
}

// The DaemonSet's pod on NODE, as the DaemonSet controller creates it and
// the kubelet reports it: Running and ready at POD_IP.
function agentPod(ds, node, podIp) {
  const name = `${ds.metadata.name}-${node}`;
  const pod = {
    apiVersion: "v1", kind: "Pod",
    metadata: {
      name, namespace: ds.metadata.namespace, labels: ds.spec.template.metadata.labels,
      annotations: ds.spec.template.metadata.annotations,
      ownerReferences: [{ apiVersion: "apps/v1", kind: "DaemonSet", name: ds.metadata.name,
        uid: ds.metadata.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: { ...ds.spec.template.spec, nodeName: node },
  };
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const conditions = ["PodScheduled", "Initialized", "ContainersReady", "Ready"]
    .map((type) => ({ type, status: "True", lastTransitionTime: now }));
  const status = {
    phase: "Running", podIP: podIp, podIPs: [{ ip: podIp }], hostIP: podIp, hostIPs: [{ ip: podIp }],
    startTime: now, conditions,
    containerStatuses: pod.spec.containers.map((c) => ({
      name: c.name, image: c.image, imageID: "", ready: true, started: true, restartCount: 0,
      state: { running: { startedAt: now } },
    })),
  };
  return { pod, status };
}

// What the endpoints and EndpointSlice controllers write for the Service
// (the Operator's default discovery role is endpoints; the slice is there
// for a Prometheus told to use endpointslice).
function serviceEndpoints(svc, pod, node, podIp) {
  const ports = svc.spec.ports.map((p) => ({ name: p.name, port: AGENT_PORT, protocol: p.protocol ?? "TCP" }));
  const targetRef = { kind: "Pod", name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid };
  const meta = { name: svc.metadata.name, namespace: svc.metadata.namespace, labels: svc.metadata.labels };
  return [
    { apiVersion: "v1", kind: "Endpoints", metadata: meta,
      subsets: [{ addresses: [{ ip: podIp, nodeName: node, targetRef }], ports }] },
    { apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", addressType: "IPv4",
      metadata: { name: `${svc.metadata.name}-test`, namespace: svc.metadata.namespace,
        labels: { ...svc.metadata.labels, "kubernetes.io/service-name": svc.metadata.name } },
      endpoints: [{ addresses: [podIp], conditions: { ready: true }, nodeName: node, targetRef }], ports },
  ];
}

// The stack's Prometheus, its service account and RBAC. apiserverConfig
// points its Kubernetes discovery at the test's API server (the platform's
// CA, a token of that service account) instead of the in-cluster
// defaults: the Operator writes that connection itself, so nothing of the
// generated configuration is edited but the rule files' directory.
function stackObjects(stack) {
  const s = STACKS[stack];
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: MONITORING } },
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: s.serviceAccount, namespace: MONITORING } },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: s.serviceAccount },
      rules: s.clusterRules },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: s.serviceAccount },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: s.serviceAccount },
      subjects: [{ kind: "ServiceAccount", name: s.serviceAccount, namespace: MONITORING }] },
  ];
}
function prometheusObject(stack, tokenFile, apiserver, ca) {
  const s = STACKS[stack];
  const spec = { version: args["prometheus-version"], serviceAccountName: s.serviceAccount, replicas: 1,
    apiserverConfig: { host: apiserver, tlsConfig: { caFile: ca }, authorization: { credentialsFile: tokenFile } } };
  for (const kind of ["serviceMonitor", "podMonitor", "rule"]) {
    spec[`${kind}Selector`] = s.selector;
    spec[`${kind}NamespaceSelector`] = {};
  }
  return { apiVersion: "monitoring.coreos.com/v1", kind: "Prometheus", metadata: { name: s.name, namespace: MONITORING }, spec };
}

// A copy of the shipped PrometheusRule with one expression broken: the
// Operator's validation (rulefmt, as its admission webhook runs it) must
// reject it, so the shipped rule being accepted means something.
function invalidRule(rule) {
  const copy = structuredClone(rule);
  copy.metadata = { name: INVALID_RULE, namespace: rule.metadata.namespace, labels: rule.metadata.labels };
  copy.spec.groups[0].rules[0].expr = "sum(rate(trainscope_broken[5m])";
  return copy;
}

async function prepare() {
  const out = args.out;
  const manifests = YAML.parseAllDocuments(readFileSync(args.manifests, "utf8")).map((d) => d.toJSON()).filter(Boolean);
  const byKind = (kind) => manifests.filter((o) => o.kind === kind);
  const ns = byKind("DaemonSet")[0].metadata.namespace;
  const env = Object.fromEntries(readFileSync(args.env, "utf8").trim().split("\n").map((l) => l.split("=", 2)));
  const tokenFile = join(out, "prometheus.token");

  apply(stackObjects(args.stack));
  writeFileSync(tokenFile, kubectl(["-n", MONITORING, "create", "token", STACKS[args.stack].serviceAccount,
    "--duration", "1h"]).trim());

  const ds = getJson(["-n", ns, "get", "daemonset", "trainscope-agent"]);
  const { pod, status } = agentPod(ds, args.node, args["pod-ip"]);
  apply([pod]);
  kubectl(["-n", ns, "patch", "pod", pod.metadata.name, "--subresource", "status", "--type", "merge",
    "-p", JSON.stringify({ status })]);
  const created = getJson(["-n", ns, "get", "pod", pod.metadata.name]);
  for (const svc of byKind("Service").filter((s) => s.metadata.name === "trainscope-agent")) {
    apply(serviceEndpoints(svc, created, args.node, args["pod-ip"]));
  }
  const rule = byKind("PrometheusRule")[0];
  apply([invalidRule(rule)]);
  apply([prometheusObject(args.stack, tokenFile, env.APISERVER_URL, env.CA_FILE)]);
  console.log(`operator-real [${elapsed()}s] applied the agent pod (${args["pod-ip"]}), its endpoints, ` +
    `Prometheus ${MONITORING}/${STACKS[args.stack].name} (${args["prometheus-version"]})`);

  const name = STACKS[args.stack].name;
  const monitor = manifests.find((o) => o.kind === "ServiceMonitor" || o.kind === "PodMonitor");
  const jobPrefix = `${monitor.kind === "PodMonitor" ? "podMonitor" : "serviceMonitor"}/${ns}/${monitor.metadata.name}/`;
  const config = await until("the Operator's generated configuration", 90, () => {
    const secret = getJson(["-n", MONITORING, "get", "secret", `prometheus-${name}`]);
    const gz = secret.data?.["prometheus.yaml.gz"];
    if (!gz) return "no prometheus.yaml.gz yet";
    const c = YAML.parse(reloaderExpand(gunzipSync(Buffer.from(gz, "base64")).toString("utf8"), name));
    return (c.scrape_configs ?? []).some((j) => j.job_name.startsWith(jobPrefix)) ? c : `no ${jobPrefix}* job yet`;
  });
  // The Operator's verdict on the broken copy first: the rule ConfigMap
  // read after it is one written with both PrometheusRules seen.
  const rejections = await until(`the Operator's verdict on ${INVALID_RULE}`, 60, () => {
    const events = getJson(["-n", ns, "get", "events", "--field-selector", `involvedObject.name=${INVALID_RULE}`]).items;
    return events.length ? events : "no event yet";
  });
  const ruleCm = await until("the Operator's rule ConfigMap", 60, () => {
    const cms = getJson(["-n", MONITORING, "get", "configmap", "-l", `prometheus-name=${name}`]).items;
    const files = Object.assign({}, ...cms.map((c) => c.data ?? {}));
    return Object.keys(files).some((k) => k.startsWith(`${ns}-${rule.metadata.name}-`)) ? files : "no rule file yet";
  });
  checkGenerated(config, ruleCm, rejections, { ns, rule, monitor, manifests, jobPrefix });

  // The rule files as the Operator mounts them: one directory per ConfigMap.
  const ruleDir = join(out, "rules");
  mkdirSync(ruleDir, { recursive: true });
  for (const [file, text] of Object.entries(ruleCm)) writeFileSync(join(ruleDir, file), text);
  config.rule_files = [join(ruleDir, "*.yaml")];
  writeFileSync(join(out, "prometheus.yml"), YAML.stringify(config));
}

// In the pod, the config reloader writes the Operator's configuration out
// with $(VAR) replaced from its environment: the pod's name and, for the
// sharding relabelling, its shard (0 of 1). Nothing else is changed.
function reloaderExpand(text, name) {
  return text.replaceAll("$(POD_NAME)", `prometheus-${name}-0`).replaceAll("$(SHARD)", "0");
}

// What the Operator generated, before any Prometheus reads it.
function checkGenerated(config, ruleFiles, rejections, { ns, rule, monitor, manifests, jobPrefix }) {
  const jobs = config.scrape_configs.filter((j) => j.job_name.startsWith(jobPrefix));
  ok(jobs.length === 1, `one scrape job for ${monitor.kind} ${ns}/${monitor.metadata.name}: ${jobs.map((j) => j.job_name)}`);
  const job = jobs[0];
  ok(job.honor_labels === true, "honor_labels: true (the agent's namespace/pod/container win)");
  const drop = job.relabel_configs.find((r) => r.action === "labeldrop");
  ok(drop && drop.regex === "(namespace|pod|container)" &&
    job.relabel_configs.indexOf(drop) > job.relabel_configs.findLastIndex((r) =>
      ["namespace", "pod", "container"].includes(r.target_label)),
  "the labeldrop of namespace|pod|container comes after the Operator's own target labels");
  const sd = job.kubernetes_sd_configs?.[0] ?? {};
  ok(sd.role === (monitor.kind === "PodMonitor" ? "pod" : "endpoints") &&
    JSON.stringify(sd.namespaces?.names) === JSON.stringify([ns]),
  `discovery role ${sd.role} in namespace ${sd.namespaces?.names} (the monitor's own: no namespaceSelector)`);

  // The hand-written emulation (operator_config.mjs, used by the
  // e2e_operator tests) must write the same relabelling as the real Operator.
  const emulated = scrapeJobs(manifests, monitor, [{ name: "node-x", address: "198.18.0.9:1" }], "/nonexistent")[0];
  const norm = (rc) => JSON.stringify(rc.map((r) => Object.fromEntries(Object.entries(r)
    .filter(([k, v]) => !(k === "separator" && v === ";") && !(k === "action" && v === "replace")
      && !(k === "regex" && v === "(.*)") && !(k === "replacement" && v === "$1"))
    .map(([k, v]) => [k, k === "regex" ? String(v) : v]).sort(([a], [b]) => a.localeCompare(b)))));
  if (!ok(norm(emulated.relabel_configs) === norm(job.relabel_configs),
    "operator_config.mjs's relabel_configs are the real Operator's")) {
    console.log(`  real:     ${norm(job.relabel_configs)}\n  emulated: ${norm(emulated.relabel_configs)}`);
  }

  const shipped = Object.entries(ruleFiles).filter(([k]) => k.startsWith(`${ns}-${rule.metadata.name}-`));
  const groups = shipped.length === 1 ? YAML.parse(shipped[0][1]).groups : [];
  ok(JSON.stringify(groups.map((g) => g.name)) === JSON.stringify(rule.spec.groups.map((g) => g.name)),
    `the Operator accepted PrometheusRule ${ns}/${rule.metadata.name}: ${groups.length} groups in its rule ConfigMap`);
  ok(!Object.keys(ruleFiles).some((k) => k.startsWith(`${ns}-${INVALID_RULE}-`)),
    `the Operator left out the broken copy ${INVALID_RULE} (its validation is on)`);
  ok(rejections.some((e) => e.reason === "InvalidConfiguration"),
    `and said so: event ${rejections.map((e) => `${e.reason}: ${e.message}`).join("; ")}`);
}

// --- check: the real Prometheus scraping the real agent ---

const TARGET_LABELS = ["job", "instance", "service", "endpoint"];
function exposition(text) {
  const series = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s/.exec(line);
    if (!m) continue;
    const labels = { __name__: m[1] };
    for (const l of (m[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
    }
    series.push(labels);
  }
  return series;
}
const key = (labels) => JSON.stringify(Object.entries(labels).filter(([k]) => !TARGET_LABELS.includes(k)).sort());

async function promApi(path) {
  const r = await fetch(args.prometheus + path, { signal: AbortSignal.timeout(10000) });
  const body = await r.json();
  if (body.status !== "success") throw new Error(`${path}: ${body.error ?? r.status}`);
  return body.data;
}
const query = async (q) => (await promApi(`/api/v1/query?query=${encodeURIComponent(q)}`)).result;

async function check() {
  const node = args.node;
  await until("Prometheus ready", 60, async () => (await fetch(`${args.prometheus}/-/ready`)).ok || "starting");
  const target = await until("the agent's target up in Prometheus", 90, async () => {
    const { activeTargets } = await promApi("/api/v1/targets?state=active");
    const t = activeTargets.find((x) => x.labels.job === "trainscope-agent");
    if (!t) return `${activeTargets.length} targets, none of job trainscope-agent`;
    return t.health === "up" ? t : `${t.scrapePool} ${t.scrapeUrl}: ${t.health} ${t.lastError}`;
  });
  ok(/^(serviceMonitor|podMonitor)\/trainscope\/trainscope-agent\/0$/.test(target.scrapePool),
    `scrape pool ${target.scrapePool}, ${target.scrapeUrl}`);
  ok(target.labels.instance === node, `instance = the node name (${target.labels.instance})`);
  ok(!target.labels.namespace && !target.labels.pod && !target.labels.container,
    `no target label names the agent's pod: ${JSON.stringify(target.labels)}`);
  ok(target.discoveredLabels.__meta_kubernetes_pod_name === `trainscope-agent-${node}`,
    `discovered through the API server: ${target.discoveredLabels.__meta_kubernetes_pod_name}`);

  // Every pod series the agent exposes arrives with the same namespace,
  // pod and container (and every other label), none renamed exported_*.
  const agentPods = await until("the same pod series in the agent and in Prometheus", 60, async () => {
    const text = await (await fetch(`${args.agent}/metrics`, { signal: AbortSignal.timeout(10000) })).text();
    const want = new Set(exposition(text).filter((s) => s.pod).map(key));
    const got = new Set((await query(`{job="trainscope-agent", pod!=""}`)).map((s) => key(s.metric)));
    if (want.size === 0) return "the agent exposes no pod series yet";
    const missing = [...want].filter((k) => !got.has(k));
    const extra = [...got].filter((k) => !want.has(k));
    if (missing.length || extra.length) {
      return `${missing.length} of ${want.size} missing (${missing[0] ?? ""}), ${extra.length} not the agent's (${extra[0] ?? ""})`;
    }
    return want;
  });
  const pods = new Set([...agentPods].map((k) => Object.fromEntries(JSON.parse(k))).map((l) => `${l.namespace}/${l.pod}`));
  ok(agentPods.size > 0, `${agentPods.size} pod series, exactly the agent's labels: pods ${[...pods].sort().join(" ")}`);
  const all = await query(`{job="trainscope-agent"}`);
  const exported = all.filter((s) => Object.keys(s.metric).some((l) => l.startsWith("exported_")));
  ok(exported.length === 0, `no exported_* label on any of ${all.length} series ${exported[0] ? JSON.stringify(exported[0].metric) : ""}`);
  const agentOwn = all.filter((s) => s.metric.namespace === "trainscope" || s.metric.pod?.startsWith("trainscope-agent-"));
  ok(agentOwn.length === 0, `no series carries the agent's own namespace or pod ${agentOwn[0] ? JSON.stringify(agentOwn[0].metric) : ""}`);
  ok(all.every((s) => s.metric.instance === node), "every series has instance = the node name");

  // The rules: loaded from the Operator's rule file, the groups of the
  // PrometheusRule.
  const rule = YAML.parseAllDocuments(readFileSync(args.manifests, "utf8")).map((d) => d.toJSON())
    .find((o) => o?.kind === "PrometheusRule");
  const { groups } = await promApi("/api/v1/rules");
  const names = (gs) => JSON.stringify(gs.map((g) => g.name).sort());
  ok(names(groups) === names(rule.spec.groups) &&
    groups.reduce((n, g) => n + g.rules.length, 0) === rule.spec.groups.reduce((n, g) => n + g.rules.length, 0),
  `Prometheus loaded ${groups.length} rule groups, ${groups.reduce((n, g) => n + g.rules.length, 0)} rules`);
}

try {
  if (process.argv[2] === "prepare") await prepare();
  else if (process.argv[2] === "check") await check();
  else throw new Error("usage: operator_real.mjs prepare|check ...");
} catch (e) {
  console.log(`operator-real FAIL ${e.message}`);
  failed++;
}
console.log(`operator-real ${process.argv[2]}: ${failed ? `${failed} FAILED` : "all passed"} (${elapsed()} s)`);
process.exit(failed ? 1 : 0);
