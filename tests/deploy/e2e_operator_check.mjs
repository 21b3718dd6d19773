// The checks of e2e_operator.sh against its Prometheus (Operator-shaped
// scrape config, shipped rules) and the two fixture agents node-a/node-b:
//  1. targets: both up, job "trainscope-agent", instance = node name, none
//     of the agent pod's namespace/pod/container target labels;
//  2. no label exported_* anywhere (honor_labels kept the agent's labels);
//     pod series name the fixture's pods and namespaces, node series carry
//     no namespace/pod;
//  3. every rule evaluates without error; the throttling recording rule
//     and TrainscopeDiagnosisActive / TrainscopeCPUThrottled name
//     training/ctr-worker-0 on node-a;
//  4. every dashboard query evaluates; a sample must return series, and no
//     returned series has an exported_* label or the agent's namespace;
//  5. `trainscope report --prometheus` names training/ctr-worker-0.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { REPO_ROOT } from "./render.mjs";

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) =>
  (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const base = args.prometheus;
const deadlineS = Number(args.deadline ?? 150);
const t0 = Date.now();
const elapsed = () => ((Date.now() - t0) / 1000).toFixed(0);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const FIXTURE_PODS = new Set(["ctr-ps-0", "ctr-worker-0", "nginx-7c5ddbdf54-2xkqv", "ctr-ps-1", "ctr-worker-1", "nginx-b-7c5ddbdf54-2xkqv"]);
const FIXTURE_NAMESPACES = new Set(["training", "web"]);
const AGENT_NAMESPACE = "trainscope";  // the namespace of the shipped manifests

let failed = 0, passed = 0;
const ok = (cond, what) => {
  if (cond) passed++;
  else failed++;
  console.log(`e2e-operator ${cond ? "ok  " : "FAIL"} ${what}`);
  return cond;
};

async function api(path) {
  const r = await fetch(base + path, { signal: AbortSignal.timeout(10000) });
  const body = await r.json();
  if (body.status !== "success") throw new Error(`${path}: ${body.error ?? r.status}`);
  return body.data;
}
const query = async (q) => (await api(`/api/v1/query?query=${encodeURIComponent(q)}`)).result;

async function until(what, limitS, fn) {
  const end = Date.now() + limitS * 1000;
  let last = "";
  while (Date.now() < end) {
    try {
      const r = await fn();
      if (r === true) return true;
      if (r && r !== last) { console.log(`e2e-operator [${elapsed()}s] ${what}: ${r}`); last = r; }
    } catch (e) {
      if (e.message !== last) { console.log(`e2e-operator [${elapsed()}s] ${what}: ${e.message}`); last = e.message; }
    }
    await sleep(2000);
  }
  throw new Error(`${what}: not reached within ${limitS}s (last: ${last})`);
}

const exported = (metric) => Object.keys(metric).filter((l) => l.startsWith("exported_"));
const labelsOf = (s) => JSON.stringify(s.metric);

try {
  await until("prometheus ready", 60, async () => (await fetch(base + "/-/ready")).ok || "starting");
  await until("both agents scraped", 60, async () => {
    const up = await query('up{job="trainscope-agent"} == 1');
    return up.length === 2 || `${up.length} of 2 targets up`;
  });

  // 1. targets
  const up = await query("up");
  ok(up.length === 2 && up.every((s) => s.metric.job === "trainscope-agent"),
    `job "trainscope-agent" from the Service's label (jobLabel): ${up.map(labelsOf).join(" ")}`);
  ok(JSON.stringify(up.map((s) => s.metric.instance).sort()) === '["node-a","node-b"]', "instance = node name");
  ok(up.every((s) => !s.metric.namespace && !s.metric.pod && !s.metric.container),
    "no target label names the agent's pod (namespace/pod/container dropped)");
  const { activeTargets } = await api("/api/v1/targets?state=active");
  ok(activeTargets.every((t) => /^(serviceMonitor|podMonitor)\/trainscope\/trainscope-agent\/0$/.test(t.scrapePool)),
    `scrape pool is the Operator's job name: ${[...new Set(activeTargets.map((t) => t.scrapePool))]}`);

  // 2. labels of the series
  // The training pods of both nodes; the nginx pods too unless the agent's
  // pod filter (default: training pods) leaves them out.
  const TRAINING_PODS = ["ctr-ps-0", "ctr-worker-0", "ctr-ps-1", "ctr-worker-1"];
  await until("training pods of both nodes", 30, async () => {
    const pods = new Set((await query("trainscope_pod_info")).map((s) => s.metric.pod));
    return TRAINING_PODS.every((p) => pods.has(p)) || `trainscope_pod_info: ${[...pods].join(",") || "none"}`;
  });
  const labels = await api("/api/v1/labels");
  ok(!labels.some((l) => l.startsWith("exported_")), `no exported_* label in the TSDB (labels: ${labels.join(",")})`);
  const info = await query("trainscope_pod_info");
  ok(info.every((s) => FIXTURE_PODS.has(s.metric.pod) && FIXTURE_NAMESPACES.has(s.metric.namespace)),
    "trainscope_pod_info names the fixture's pods and namespaces, not the agent's");
  ok(info.every((s) => s.metric.instance === s.metric.node), "pod series: instance = the node the agent runs on");
  const podSeries = await query('count by (namespace) ({__name__=~"trainscope_(pod|container)_.+"})');
  ok(podSeries.some((s) => s.metric.namespace === "training") && podSeries.every((s) => FIXTURE_NAMESPACES.has(s.metric.namespace)),
    `pod/container series per namespace: ${podSeries.map((s) => `${s.metric.namespace}=${s.value[1]}`).join(" ")}`);
  const containers = await query('count by (container) ({__name__=~"trainscope_container_.+"})');
  ok(containers.some((s) => s.metric.container === "tensorflow") && !containers.some((s) => s.metric.container === "agent"),
    `container series keep the training containers' names: ${containers.map((s) => s.metric.container).join(",")}`);
  const nodeSeries = await query('{__name__=~"trainscope_node_.+"}');
  ok(nodeSeries.length > 0 && nodeSeries.every((s) => !s.metric.namespace && !s.metric.pod && s.metric.node === s.metric.instance),
    `${nodeSeries.length} node series: node label = instance, no namespace/pod of the agent's pod`);
  const agentOwn = await query("trainscope_build_info");
  ok(agentOwn.length === 2 && agentOwn.every((s) => !s.metric.namespace && !s.metric.pod),
    "the agent's own series (trainscope_build_info) carry no agent pod labels");

  // 3. rules
  const rules = await api("/api/v1/rules");
  const all = rules.groups.flatMap((g) => g.rules);
  ok(all.length > 0 && all.every((r) => r.health !== "err"),
    `${all.length} shipped rules loaded, none failing: ${all.filter((r) => r.health === "err").map((r) => `${r.name}: ${r.lastError}`).join("; ")}`);
  await until("throttling ratio of training/ctr-worker-0", deadlineS, async () => {
    const r = await query('namespace_pod:trainscope_pod_cpu_throttled_periods:ratio_rate5m');
    const mine = r.find((s) => s.metric.pod === "ctr-worker-0");
    return (mine && Math.abs(Number(mine.value[1]) - 0.4) < 0.1) || `series: ${r.map((s) => `${labelsOf(s)}=${s.value[1]}`).join(" ") || "none yet"}`;
  });
  const ratio = await query("namespace_pod:trainscope_pod_cpu_throttled_periods:ratio_rate5m");
  ok(ratio.every((s) => FIXTURE_NAMESPACES.has(s.metric.namespace) && !exported(s.metric).length),
    `recording rule output: ${ratio.map(labelsOf).join(" ")}`);
  await until("TrainscopeDiagnosisActive for training/ctr-worker-0", deadlineS, async () => {
    const { alerts } = await api("/api/v1/alerts");
    const a = alerts.find((x) => x.labels.alertname === "TrainscopeDiagnosisActive" && x.labels.kind === "cpu_throttled");
    return (a && a.labels.namespace === "training" && a.labels.pod === "ctr-worker-0" && a.labels.node === "node-a") ||
      `alerts: ${alerts.map((x) => JSON.stringify(x.labels)).join(" ") || "none yet"}`;
  });
  await until("TrainscopeCPUThrottled for training/ctr-worker-0", 30, async () => {
    const { alerts } = await api("/api/v1/alerts");
    return alerts.some((a) => a.labels.alertname === "TrainscopeCPUThrottled") || "not pending yet";
  });
  const { alerts } = await api("/api/v1/alerts");
  for (const a of alerts) console.log(`e2e-operator alert ${a.labels.alertname} ${a.state} ${JSON.stringify(a.labels)}`);
  ok(alerts.some((a) => a.labels.alertname === "TrainscopeDiagnosisActive" && a.labels.pod === "ctr-worker-0" &&
    a.labels.namespace === "training"), "TrainscopeDiagnosisActive names training/ctr-worker-0 (pending or firing)");
  ok(alerts.some((a) => a.labels.alertname === "TrainscopeCPUThrottled" && a.labels.pod === "ctr-worker-0" &&
    a.labels.namespace === "training" && a.labels.training_job === "ctr"), "TrainscopeCPUThrottled names training/ctr-worker-0 of job ctr");
  ok(alerts.every((a) => a.labels.namespace !== AGENT_NAMESPACE && !exported(a.labels).length),
    "no alert carries the agent's namespace or an exported_* label");
  ok(!alerts.some((a) => a.labels.alertname === "TrainscopeAgentDown"), "TrainscopeAgentDown is quiet");

  // 4. dashboards: every query evaluates; a sample must return series.
  const VARS = { $__rate_interval: "1m", $namespace: "training", $training_job: "ctr", $node: "node-a|node-b", $cluster: ".*" };
  const MUST_RETURN = ["CPU usage", "CPU throttling", "Memory working set", "Active diagnoses", "Training pods per node",
    "Nodes by CPU use", "Node memory available", "Agents up", "Collector status", "Agent memory", "Discovery ready", "Agent versions"];
  let total = 0, withData = 0;
  const seen = new Set();
  for (const file of readdirSync(join(REPO_ROOT, "dashboards")).filter((f) => /^trainscope-.+\.json$/.test(f)).sort()) {
    const d = JSON.parse(readFileSync(join(REPO_ROOT, "dashboards", file), "utf8"));
    const panels = d.panels.flatMap((p) => (p.type === "row" ? p.panels ?? [] : [p]));
    for (const p of panels) {
      for (const t of p.targets ?? []) {
        total++;
        const q = t.expr.replace(/\$\{?(__rate_interval|namespace|training_job|node|cluster)\}?/g, (_, v) => VARS[`$${v}`]);
        let result;
        try {
          result = await query(q);
        } catch (e) {
          ok(false, `${file} "${p.title}" ${t.refId}: ${e.message}`);
          continue;
        }
        if (result.length) { withData++; seen.add(p.title); }
        const bad = result.filter((s) => exported(s.metric).length || s.metric.namespace === AGENT_NAMESPACE);
        if (bad.length) ok(false, `${file} "${p.title}" ${t.refId}: wrong labels ${bad.map(labelsOf).join(" ")}`);
      }
    }
  }
  ok(total > 0, `${total} dashboard queries evaluate, ${withData} return series`);
  for (const title of MUST_RETURN) ok(seen.has(title), `dashboard panel "${title}" returns series`);

  // 5. the cluster report through the same Prometheus: its replay needs a
  // few samples of the throttled pod, so it is retried (bounded).
  let r, report;
  await until("trainscope report --prometheus names cpu_throttled", 90, async () => {
    r = spawnSync(args.cli, ["report", "--prometheus", base, "--range", "60", "--step", "2", "--json"],
      { encoding: "utf8", timeout: 60000 });
    if (r.status !== 0) return `exit ${r.status}: ${r.stderr}`;
    report = JSON.parse(r.stdout);
    const diags = report.diagnoses ?? [];
    return diags.some((d) => d.kind === "cpu_throttled" && d.namespace === "training" && d.pod === "ctr-worker-0") ||
      `diagnoses: ${diags.map((d) => `${d.kind} ${d.namespace}/${d.pod}`).join(", ") || "none yet"}`;
  }).catch((e) => ok(false, e.message));
  if (ok(r?.status === 0 && report, `trainscope report --prometheus exits 0${r?.status ? ": " + r.stderr : ""}`)) {
    const diags = report.diagnoses ?? [];
    console.log(`e2e-operator report: ${diags.map((d) => `${d.kind} ${d.namespace}/${d.pod}`).join(", ") || "no diagnoses"}`);
    ok(diags.some((d) => d.kind === "cpu_throttled" && d.namespace === "training" && d.pod === "ctr-worker-0"),
      "the cluster report diagnoses cpu_throttled for training/ctr-worker-0");
    ok(diags.every((d) => !d.namespace || FIXTURE_NAMESPACES.has(d.namespace)), "the report names no namespace but the fixture's");
    ok(!/exported_|"trainscope-agent-node-/.test(r.stdout), "the report shows no exported_* label or agent pod");
  }
  // --selector with the labels the Operator's job gives the series: the
  // mixin's selector keeps the diagnosis, a job nobody has removes it.
  const withSelector = (sel) => {
    const x = spawnSync(args.cli, ["report", "--prometheus", base, "--range", "60", "--step", "2", "--json", "--selector", sel],
      { encoding: "utf8", timeout: 60000 });
    return x.status === 0 ? (JSON.parse(x.stdout).diagnoses ?? []) : null;
  };
  const same = withSelector('job="trainscope-agent"');
  ok(same?.some((d) => d.kind === "cpu_throttled" && d.pod === "ctr-worker-0"),
    `report --selector 'job="trainscope-agent"' keeps the diagnosis`);
  const none = withSelector('job="someone-else"');
  ok(none !== null && none.length === 0, `report --selector 'job="someone-else"' finds nothing (${none?.length} diagnoses)`);
} catch (e) {
  ok(false, e.message);
}
console.log(`e2e-operator: ${passed} checks passed, ${failed} failed (${elapsed()}s)`);
process.exit(failed ? 1 : 0);
