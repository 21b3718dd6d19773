// Dashboards (dashboards/*.json) and rules (dashboards/alerts.yaml,
// daemonset/base/prometheusrule.yaml):
// - JSON parses; current schemaVersion; a `datasource` variable of type
//   datasource and the namespace/training_job/node variables;
// - every panel has the ${datasource} datasource and at least one query;
//   no hard-coded datasource UID anywhere;
// - every panel expression is valid PromQL (promtool, variables substituted);
// - every metric a panel or rule reads is in docs/metrics.md, is a recording
//   rule of alerts.yaml, or is Prometheus's own (up, scrape_duration_seconds);
// - rules: names, severity, annotations, runbook anchors in docs/runbooks.md,
//   and the PrometheusRule carries exactly the groups of alerts.yaml.
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { isDeepStrictEqual } from "node:util";
import YAML from "yaml";
import { REPO_ROOT, check, done } from "./render.mjs";
import { metricNames, documentedMetrics } from "./promql_names.mjs";

const PROMETHEUS_OWN = new Set(["up", "scrape_duration_seconds", "scrape_samples_scraped"]);
const documented = documentedMetrics(readFileSync(join(REPO_ROOT, "docs/metrics.md"), "utf8"));
const rulesFile = YAML.parse(readFileSync(join(REPO_ROOT, "dashboards/alerts.yaml"), "utf8"));
const allRules = rulesFile.groups.flatMap((g) => g.rules);
const recorded = new Set(allRules.filter((r) => r.record).map((r) => r.record));
const runbooks = readFileSync(join(REPO_ROOT, "docs/runbooks.md"), "utf8");
const anchors = new Set([...runbooks.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) =>
  m[1].trim().toLowerCase().replace(/[^\w\- ]/g, "").replace(/ /g, "-")));

export const SUBSTITUTE = { $__rate_interval: "1m", $namespace: ".*", $training_job: ".*", $node: ".*", $cluster: ".*" };
const substitute = (expr, values = SUBSTITUTE) =>
  expr.replace(/\$__rate_interval|\$namespace|\$training_job|\$node|\$cluster/g, (v) => values[v]);

function checkMetrics(where, expr) {
  for (const name of metricNames(expr)) {
    check(documented.has(name) || recorded.has(name) || PROMETHEUS_OWN.has(name),
      `${where}: metric ${name} is neither in docs/metrics.md nor a recording rule of dashboards/alerts.yaml`);
  }
}

// ---- dashboards
const files = readdirSync(join(REPO_ROOT, "dashboards")).filter((f) => f.endsWith(".json")).sort();
check(files.length >= 3, `want the training job, cluster overview and agent health dashboards, found ${files}`);
const promqlRules = [];
for (const file of files) {
  const text = readFileSync(join(REPO_ROOT, "dashboards", file), "utf8");
  let d;
  try {
    d = JSON.parse(text);
  } catch (e) {
    check(false, `${file}: invalid JSON: ${e.message}`);
    continue;
  }
  check(d.schemaVersion >= 36, `${file}: schemaVersion ${d.schemaVersion} is older than Grafana 9`);
  check(typeof d.uid === "string" && d.uid.length > 0 && d.uid.length <= 40, `${file}: needs a stable uid`);
  const vars = new Map((d.templating?.list ?? []).map((v) => [v.name, v]));
  check(vars.get("datasource")?.type === "datasource" && vars.get("datasource")?.query === "prometheus",
    `${file}: needs a "datasource" variable of type datasource (prometheus)`);
  // The cluster variable (dashboards/mixin/config.libsonnet clusterLabel) on every dashboard.
  const wantVars = ["cluster", ...(file.includes("agent-health") ? ["node"] : ["namespace", "training_job", "node"])];
  for (const v of wantVars) check(vars.get(v)?.type === "query", `${file}: needs the template variable ${v}`);
  for (const v of vars.values()) {
    if (v.type === "query") check(v.datasource?.uid === "${datasource}", `${file}: variable ${v.name} must use \${datasource}`);
  }
  // No hard-coded datasource UIDs anywhere in the document.
  const walk = (node, path) => {
    if (Array.isArray(node)) return node.forEach((x, i) => walk(x, `${path}[${i}]`));
    if (node && typeof node === "object") {
      if (node.datasource !== undefined && node.datasource !== null) {
        const ds = node.datasource;
        const ok = typeof ds === "string" ? ds === "${datasource}" : ds.uid === "${datasource}";
        check(ok, `${file}: ${path}.datasource is ${JSON.stringify(ds)}, want the \${datasource} variable`);
      }
      for (const [k, val] of Object.entries(node)) walk(val, `${path}.${k}`);
    }
  };
  walk(d.panels, "panels");
  const ids = new Set();
  const panels = d.panels.flatMap((p) => (p.type === "row" ? p.panels ?? [] : [p]));
  check(panels.length >= 5, `${file}: only ${panels.length} panels`);
  for (const p of panels) {
    const where = `${file}: panel "${p.title}"`;
    check(!ids.has(p.id), `${where}: duplicate id ${p.id}`);
    ids.add(p.id);
    check(p.gridPos && p.gridPos.w > 0 && p.gridPos.h > 0, `${where}: gridPos`);
    check(p.datasource?.uid === "${datasource}", `${where}: datasource must be \${datasource}`);
    check(Array.isArray(p.targets) && p.targets.length > 0, `${where}: no query`);
    for (const t of p.targets ?? []) {
      check(typeof t.expr === "string" && t.expr.trim().length > 0, `${where}: target ${t.refId} has no expr`);
      if (!t.expr) continue;
      checkMetrics(`${where} ${t.refId}`, t.expr);
      promqlRules.push({ record: `dashboard:check_${promqlRules.length}:expr`, expr: substitute(t.expr), _where: `${where} ${t.refId}` });
    }
  }
}

// ---- PromQL syntax of every panel expression (promtool, offline)
const tmp = mkdtempSync(join(tmpdir(), "trainscope-dash-"));
try {
  const rulesPath = join(tmp, "panels.yaml");
  writeFileSync(rulesPath, YAML.stringify({ groups: [{ name: "panels", rules: promqlRules.map(({ record, expr }) => ({ record, expr })) }] }));
  const r = spawnSync("promtool", ["check", "rules", rulesPath], { encoding: "utf8" });
  if (r.error) check(false, `promtool is not installed (Debian package prometheus): ${r.error.message}`);
  else {
    let msg = r.stdout + r.stderr;
    for (const [i, pr] of promqlRules.entries()) msg = msg.replaceAll(`rule ${i + 1},`, `(${pr._where}),`);
    check(r.status === 0, `panel expressions are not valid PromQL:\n${msg}`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

// ---- rules
for (const g of rulesFile.groups) {
  for (const r of g.rules) {
    const name = r.record ?? r.alert;
    checkMetrics(`alerts.yaml ${name}`, r.expr);
    if (r.record) {
      check(/^[a-z][a-z0-9_]*:[a-z][a-z0-9_]*:[a-z][a-z0-9_]*$/.test(r.record), `recording rule ${r.record} is not level:metric:operation`);
      continue;
    }
    check(/^Trainscope[A-Z][A-Za-z0-9]*$/.test(r.alert), `alert ${r.alert}: CamelCase with the Trainscope prefix`);
    const sev = r.labels?.severity;
    if (sev === undefined) {
      // Only an alert whose expression carries the severity label itself.
      check(/\bseverity\b/.test(r.expr) && /trainscope_diagnosis_active/.test(r.expr), `alert ${r.alert}: no severity label`);
    } else {
      check(["critical", "warning", "info"].includes(sev), `alert ${r.alert}: severity ${sev}`);
    }
    check(r.annotations?.summary && r.annotations?.description?.includes("{{"), `alert ${r.alert}: summary and templated description`);
    const url = r.annotations?.runbook_url ?? "";
    const anchor = url.split("#")[1];
    check(url.includes("docs/runbooks.md#") && anchors.has(anchor), `alert ${r.alert}: runbook_url anchor #${anchor} is not a heading of docs/runbooks.md`);
    check(anchor === r.alert.toLowerCase(), `alert ${r.alert}: runbook anchor should be #${r.alert.toLowerCase()}`);
    const forMin = { s: 1 / 60, m: 1, h: 60 }[(r.for ?? "0s").slice(-1)] * parseFloat(r.for ?? "0");
    check(forMin >= 1, `alert ${r.alert}: for: ${r.for} is too short to avoid flapping (>= 1m)`);
  }
}
const pr = YAML.parseAllDocuments(readFileSync(join(REPO_ROOT, "daemonset/base/prometheusrule.yaml"), "utf8"))[0].toJSON();
check(pr.kind === "PrometheusRule" && isDeepStrictEqual(pr.spec.groups, rulesFile.groups),
  "daemonset/base/prometheusrule.yaml differs from dashboards/alerts.yaml; run: python3 dashboards/mixin/generate.py");

console.log(`${files.length} dashboards, ${promqlRules.length} panel queries, ${allRules.length} rules`);
done("check_dashboards");
