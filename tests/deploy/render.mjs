// Renders a kustomization with `kubectl kustomize` and parses every object.
import { spawnSync } from "node:child_process";
import { dirname, isAbsolute, join, relative } from "node:path";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const VARIANTS = ["daemonset", "daemonset/overlays/pcap", "daemonset/overlays/sys-admin",
  "daemonset/overlays/kube-prometheus", "daemonset/overlays/kube-prometheus-stack",
  "daemonset/overlays/kube-prometheus-secured"];

// `variant`: a directory relative to the repository, or an absolute one.
export function render(variant) {
  const dir = isAbsolute(variant) ? variant : join(REPO_ROOT, variant);
  const r = spawnSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
  if (r.error) {
    throw new Error(`kubectl is not installed (${r.error.message}); it is not a Debian 12 package: install it from https://pkgs.k8s.io (docs/deploy.md, "Tests")`);
  }
  if (r.status !== 0) throw new Error(`kubectl kustomize ${variant} failed:\n${r.stderr}`);
  return YAML.parseAllDocuments(r.stdout).map((d) => {
    if (d.errors.length) throw new Error(`${variant}: YAML error: ${d.errors[0].message}`);
    return d.toJSON();
  }).filter(Boolean);
}

// Renders a throw-away kustomization (YAML text; "@REPO@" stands for the
// repository root, as a path relative to the temp dir) and removes it.
export function renderKustomization(text) {
  const dir = mkdtempSync(join(tmpdir(), "trainscope-kustomize-"));
  try {
    writeFileSync(join(dir, "kustomization.yaml"), text.replaceAll("@REPO@", relative(dir, REPO_ROOT)));
    return render(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function find(objects, kind, name) {
  const o = objects.find((x) => x.kind === kind && (!name || x.metadata?.name === name));
  if (!o) throw new Error(`no ${kind}${name ? " " + name : ""} in the rendered objects`);
  return o;
}

// Tiny test harness: check(cond, message) collects failures; done() exits.
const failures = [];
let checks = 0;
export function check(cond, message) {
  checks++;
  if (!cond) failures.push(message);
}
export function done(what) {
  if (failures.length) {
    for (const f of failures) console.error(`FAIL: ${f}`);
    console.error(`${what}: ${failures.length} of ${checks} checks failed`);
    process.exit(1);
  }
  console.log(`${what}: all ${checks} checks passed`);
}
