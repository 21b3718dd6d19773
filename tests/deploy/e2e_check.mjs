// The Prometheus side of e2e_prometheus.sh: waits (bounded) for the agent
// target, then for TrainscopeHotParameterServer{pod="ctr-ps-0"} to fire,
// then runs every dashboard panel's PromQL (variables substituted) as an
// instant query and requires at least one series from each.
import { readFileSync, readdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) =>
  (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const base = args.prometheus;
const deadlineS = Number(args.deadline ?? 600);
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const VARS = { $__rate_interval: "1m", $namespace: "training", $training_job: "ctr", $node: args.node, $cluster: ".*" };
const t0 = Date.now();
const elapsed = () => ((Date.now() - t0) / 1000).toFixed(0);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function api(path) {
  const r = await fetch(base + path, { signal: AbortSignal.timeout(10000) });
  const body = await r.json();
  if (body.status !== "success") throw new Error(`${path}: ${body.error ?? r.status}`);
  return body.data;
}
const query = (q) => api(`/api/v1/query?query=${encodeURIComponent(q)}`);

async function until(what, limitS, fn) {
  const end = t0 + limitS * 1000;
  let last = "";
  while (Date.now() < end) {
    try {
      const r = await fn();
      if (r === true) return;
      if (r && r !== last) { console.log(`e2e [${elapsed()}s] ${what}: ${r}`); last = r; }
    } catch (e) {
      if (e.message !== last) { console.log(`e2e [${elapsed()}s] ${what}: ${e.message}`); last = e.message; }
    }
    await sleep(5000);
  }
  throw new Error(`${what}: not reached within ${limitS}s (last: ${last})`);
}

let failed = 0;
try {
  await until("prometheus ready", 60, async () => (await fetch(base + "/-/ready")).ok || "starting");
  await until("agent scraped", 120, async () => {
    const r = await query('up{job="trainscope-agent"}');
    return r.result.some((s) => s.value[1] === "1") || "target not up yet";
  });
  console.log(`e2e [${elapsed()}s] agent target is up`);
  const rulesOk = await api("/api/v1/rules");
  const nRules = rulesOk.groups.reduce((n, g) => n + g.rules.length, 0);
  console.log(`e2e: prometheus loaded ${rulesOk.groups.length} rule groups, ${nRules} rules`);
  if (nRules === 0) throw new Error("no rules loaded from dashboards/alerts.yaml");

  await until("TrainscopeHotParameterServer for ctr-ps-0", deadlineS, async () => {
    const { alerts } = await api("/api/v1/alerts");
    const hot = alerts.filter((a) => a.labels.alertname === "TrainscopeHotParameterServer");
    const wrong = hot.filter((a) => a.labels.pod !== "ctr-ps-0");
    if (wrong.length) throw new Error(`hot-PS alert for the wrong pod: ${JSON.stringify(wrong.map((a) => a.labels))}`);
    const mine = hot.find((a) => a.labels.pod === "ctr-ps-0");
    if (mine?.state === "firing") return true;
    if (mine) return `${mine.state} since ${mine.activeAt}, share ${Number(mine.value).toFixed(3)}`;
    const share = await query('training_job_pod:trainscope_ps_traffic_share:ratio{training_job="ctr"}');
    return `no alert yet; shares ${share.result.map((s) => `${s.metric.pod}=${Number(s.value[1]).toFixed(2)}`).join(" ") || "(none yet)"}`;
  });
  console.log(`e2e [${elapsed()}s] PASS: TrainscopeHotParameterServer{pod="ctr-ps-0"} is firing`);

  const { alerts } = await api("/api/v1/alerts");
  for (const a of alerts) console.log(`e2e: alert ${a.labels.alertname} ${a.state} ${JSON.stringify(a.labels)}`);
  const diag = alerts.find((a) => a.labels.alertname === "TrainscopeDiagnosisActive" &&
    a.labels.kind === "hot_parameter_server" && a.labels.pod === "ctr-ps-0");
  if (diag?.state === "firing") console.log("e2e PASS: TrainscopeDiagnosisActive{kind=hot_parameter_server, pod=ctr-ps-0} is firing");
  else { console.log(`e2e FAIL: TrainscopeDiagnosisActive for the hot_parameter_server diagnosis is ${diag?.state ?? "absent"}`); failed++; }

  // Every panel query returns at least one series (up to 3 tries, 10 s apart,
  // for series that appear late).
  const files = readdirSync(join(root, "dashboards")).filter((f) => /^trainscope-.+\.json$/.test(f)).sort();
  let total = 0;
  for (const file of files) {
    const d = JSON.parse(readFileSync(join(root, "dashboards", file), "utf8"));
    const panels = d.panels.flatMap((p) => (p.type === "row" ? p.panels ?? [] : [p]));
    for (const p of panels) {
      for (const t of p.targets) {
        total++;
        const q = t.expr.replace(/\$__rate_interval|\$namespace|\$training_job|\$node|\$cluster/g, (v) => VARS[v]);
        let n = 0, err = "";
        for (let attempt = 0; attempt < 3 && n === 0; attempt++) {
          if (attempt) await sleep(10000);
          try { n = (await query(q)).result.length; err = ""; } catch (e) { err = e.message; }
        }
        if (n > 0) console.log(`e2e ok   ${file} "${p.title}" ${t.refId}: ${n} series`);
        else { console.log(`e2e FAIL ${file} "${p.title}" ${t.refId}: no series${err ? " (" + err + ")" : ""}\n         ${q}`); failed++; }
      }
    }
  }
  console.log(`e2e: ${total} panel queries checked, ${failed} failures`);
} catch (e) {
  console.log(`e2e FAIL: ${e.message}`);
  failed++;
}
process.exit(failed ? 1 : 0);
