// Renders the Helm chart (daemonset/chart/trainscope) with the real helm,
// built by scripts/install-helm.sh into the tool cache, and parses every
// object; shared by chart_equivalence.mjs and chart_unit.mjs.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { REPO_ROOT } from "./render.mjs";

export const CHART = join(REPO_ROOT, "daemonset/chart/trainscope");
export const NAMESPACE = "trainscope";
// The labels Helm charts put on every object and kustomize does not.
export const HELM_LABELS = ["helm.sh/chart", "app.kubernetes.io/managed-by",
  "app.kubernetes.io/instance", "app.kubernetes.io/version"];

let helmPath;
// The helm binary: built unless it is in the tool cache already.
export function helm() {
  if (helmPath) return helmPath;
  const script = join(REPO_ROOT, "scripts/install-helm.sh");
  const build = spawnSync("bash", [script], { encoding: "utf8", stdio: ["ignore", "inherit", "inherit"] });
  if (build.status !== 0) throw new Error("scripts/install-helm.sh failed: no helm to test the chart with");
  helmPath = spawnSync("bash", [script, "--print"], { encoding: "utf8" }).stdout.trim();
  return helmPath;
}

// Runs helm with `args`, `values` (an object) as a values file; returns
// {status, stdout, stderr}.
export function runHelm(args, values = {}) {
  const dir = mkdtempSync(join(tmpdir(), "trainscope-chart-"));
  try {
    // JSON, a YAML subset without YAML 1.1's surprises (helm reads an
    // unquoted yes as true).
    const file = join(dir, "values.json");
    writeFileSync(file, JSON.stringify(values));
    const r = spawnSync(helm(), [...args, "-f", file], { encoding: "utf8" });
    if (r.error) throw new Error(`helm: ${r.error.message}`);
    return r;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function parseAll(text, what) {
  return YAML.parseAllDocuments(text).map((d) => {
    if (d.errors.length) throw new Error(`${what}: YAML error: ${d.errors[0].message}`);
    return d.toJSON();
  }).filter(Boolean);
}

// `helm template` of the chart (release "trainscope" in NAMESPACE) with
// `values`; throws with helm's message when it fails.
export function template(values = {}, { chart = CHART, extraArgs = [] } = {}) {
  const r = runHelm(["template", "trainscope", chart, "--namespace", NAMESPACE, ...extraArgs], values);
  if (r.status !== 0) throw new Error(`helm template failed:\n${r.stderr}`);
  return parseAll(r.stdout, "helm template");
}

// `helm template` that must fail: returns helm's message.
export function templateError(values) {
  const r = runHelm(["template", "trainscope", CHART, "--namespace", NAMESPACE], values);
  return r.status === 0 ? null : r.stderr;
}
