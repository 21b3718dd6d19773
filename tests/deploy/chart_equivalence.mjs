// The Helm chart and the kustomize tree deploy the same objects: for each
// kustomize variant (the default, every overlay, and the components no
// overlay uses) `helm template` with the values that stand for it renders,
// parsed, exactly the objects `kubectl kustomize` renders, field for field,
// with two differences the chart makes on purpose:
// - no Namespace object: a chart installs into the release's namespace,
//   which `helm install --create-namespace` (or you) makes; docs/deploy.md
//   says how to label it for Pod Security;
// - Helm's four labels (HELM_LABELS) on every object's metadata.
// Container env lists are compared by name, not order (Kubernetes merges
// them by name; a kustomize patch puts its entries first). Every other
// difference fails, naming the object and the JSON path (this test found
// the components' objects without app.kubernetes.io/part-of: each
// component now sets it as the base does).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { render, renderKustomization, check, done } from "./render.mjs";
import { CHART, HELM_LABELS, template } from "./chart_render.mjs";

const ciValues = (name) => YAML.parse(readFileSync(join(CHART, "ci", name), "utf8"));
const withComponents = (...components) => renderKustomization(`
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: ["@REPO@/daemonset/base"]
components: [${components.map((c) => `"@REPO@/daemonset/components/${c}"`).join(", ")}]
`);

// kustomize variant -> the chart values that stand for it.
const CASES = [
  { name: "default", kustomize: () => render("daemonset"), values: {} },
  {
    name: "kube-prometheus-stack",
    kustomize: () => render("daemonset/overlays/kube-prometheus-stack"),
    values: ciValues("kube-prometheus-stack-values.yaml"),
  },
  {
    name: "kube-prometheus",
    kustomize: () => render("daemonset/overlays/kube-prometheus"),
    values: { kubePrometheus: { rbac: true } },
  },
  {
    name: "kube-prometheus-secured",
    kustomize: () => render("daemonset/overlays/kube-prometheus-secured"),
    values: { kubePrometheus: { rbac: true }, kubeRbacProxy: { enabled: true }, networkPolicy: { enabled: true } },
  },
  { name: "pcap", kustomize: () => render("daemonset/overlays/pcap"), values: { agent: { flows: "pcap" } } },
  { name: "sys-admin", kustomize: () => render("daemonset/overlays/sys-admin"), values: { agent: { sysAdmin: true } } },
  { name: "podmonitor", kustomize: () => withComponents("podmonitor"), values: { podMonitor: { enabled: true } } },
  { name: "web-config", kustomize: () => withComponents("web-config"), values: { webConfig: { enabled: true } } },
  { name: "cli-access", kustomize: () => withComponents("cli-access"), values: { cliAccess: { create: true } } },
  {
    name: "network-policy + grafana-dashboards",
    kustomize: () => withComponents("network-policy", "grafana-dashboards"),
    values: { networkPolicy: { enabled: true }, dashboards: { enabled: true } },
  },
];

const key = (o) => `${o.kind}/${o.metadata?.namespace ? o.metadata.namespace + "/" : ""}${o.metadata?.name}`;


function withoutHelmLabels(o) {
  const copy = structuredClone(o);
  const labels = copy.metadata?.labels ?? {};
  for (const l of HELM_LABELS) delete labels[l];
  return copy;
}

// The env lists of every container, sorted by name.
function envByName(o) {
  const copy = structuredClone(o);
  for (const c of copy.spec?.template?.spec?.containers ?? []) {
    c.env?.sort((a, b) => a.name.localeCompare(b.name));
  }
  return copy;
}

// The JSON paths where a and b differ (at most `limit`).
function differences(a, b, path = "", out = [], limit = 8) {
  if (out.length >= limit) return out;
  if (a === b) return out;
  const bothObjects = a && b && typeof a === "object" && typeof b === "object" &&
    Array.isArray(a) === Array.isArray(b);
  if (!bothObjects) {
    out.push(`${path || "/"}: kustomize ${JSON.stringify(a)?.slice(0, 200)} != chart ${JSON.stringify(b)?.slice(0, 200)}`);
    return out;
  }
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    differences(a[k], b[k], `${path}/${k}`, out, limit);
  }
  return out;
}

for (const c of CASES) {
  let want;
  let got;
  try {
    want = c.kustomize().filter((o) => o.kind !== "Namespace");
    got = template(c.values);
  } catch (e) {
    check(false, `${c.name}: ${e.message}`);
    continue;
  }
  for (const o of got) {
    const labels = o.metadata?.labels ?? {};
    check(HELM_LABELS.every((l) => l in labels), `${c.name}: chart ${key(o)} lacks one of ${HELM_LABELS}`);
  }
  const wantByKey = new Map(want.map((o) => [key(o), o]));
  const gotByKey = new Map(got.map((o) => [key(o), withoutHelmLabels(o)]));
  check(wantByKey.size === want.length && gotByKey.size === got.length, `${c.name}: an object twice`);
  for (const k of wantByKey.keys()) check(gotByKey.has(k), `${c.name}: ${k} from kustomize is missing in the chart`);
  for (const k of gotByKey.keys()) check(wantByKey.has(k), `${c.name}: ${k} in the chart is not in kustomize`);
  for (const [k, o] of wantByKey) {
    if (!gotByKey.has(k)) continue;
    const diff = differences(envByName(o), envByName(gotByKey.get(k)));
    check(diff.length === 0, `${c.name}: ${k} differs:\n  ${diff.join("\n  ")}`);
  }
  console.log(`${c.name}: ${want.length} objects compared`);
}
done("chart_equivalence");
