// Re-namespacing with kustomize (`namespace: NAME` in the user's overlay)
// moves every reference to the agent's namespace: all namespaced objects,
// the RBAC subjects naming the agent's service account, the Role of the
// kube-prometheus component, the ServiceMonitor's scope, the Namespace
// object (with the Pod Security labels) when one is installed. References
// to the monitoring stack's namespace stay. Installing into an existing
// namespace without components/namespace relabels nothing.
import { renderKustomization, check, done } from "./render.mjs";

const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "PriorityClass"]);
const overlays = ["daemonset", "daemonset/overlays/kube-prometheus", "daemonset/overlays/kube-prometheus-stack",
  "daemonset/overlays/kube-prometheus-secured", "daemonset/overlays/pcap", "daemonset/overlays/sys-admin"];

function checkMoved(where, objects, ns, { expectNamespaceObject }) {
  for (const o of objects) {
    const id = `${where}: ${o.kind}/${o.metadata.name}`;
    if (CLUSTER_SCOPED.has(o.kind)) {
      check(o.metadata.namespace === undefined, `${id}: cluster-scoped, no namespace`);
    } else {
      check(o.metadata.namespace === ns, `${id}: in ${ns}, found ${o.metadata.namespace}`);
    }
    for (const s of o.subjects ?? []) {
      if (s.kind !== "ServiceAccount") continue;
      const agentSa = s.name === "trainscope-agent";
      const want = agentSa ? ns : "monitoring";
      check(s.namespace === want, `${id}: subject ${s.name} in ${want}, found ${s.namespace}`);
    }
    if (o.kind === "ServiceMonitor" || o.kind === "PodMonitor") {
      const sel = o.spec.namespaceSelector;
      check(!sel || (sel.matchNames ?? []).every((n) => n === ns), `${id}: selects only ${ns}`);
    }
  }
  // Nothing names the old namespace any more (labels with the product's name
  // aside, e.g. app.kubernetes.io/part-of: trainscope).
  const text = JSON.stringify(objects.map((o) => ({ ...o, metadata: { ...o.metadata, labels: undefined } })));
  check(!/"namespace":"trainscope"/.test(text), `${where}: no reference to namespace trainscope left`);
  const nsObjects = objects.filter((o) => o.kind === "Namespace");
  if (expectNamespaceObject) {
    check(nsObjects.length === 1 && nsObjects[0].metadata.name === ns &&
      nsObjects[0].metadata.labels?.["pod-security.kubernetes.io/enforce"] === "privileged",
    `${where}: the Namespace object is ${ns}, labelled privileged`);
  } else {
    check(nsObjects.length === 0, `${where}: no Namespace object (the existing ${ns} keeps its Pod Security labels)`);
  }
  // The RoleBinding of kube-prometheus grants prometheus-k8s a Role in ns.
  for (const rb of objects.filter((o) => o.kind === "RoleBinding")) {
    const role = objects.find((o) => o.kind === "Role" && o.metadata.name === rb.roleRef.name);
    check(role && role.metadata.namespace === ns, `${where}: RoleBinding ${rb.metadata.name} refers to a Role in ${ns}`);
  }
}

for (const overlay of overlays) {
  const ns = "ml-observability";
  try {
    const objects = renderKustomization(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${ns}
resources:
  - @REPO@/${overlay}
`);
    checkMoved(`${overlay} -> ${ns}`, objects, ns, { expectNamespaceObject: true });
  } catch (e) {
    check(false, `${overlay}: ${e.message}`);
  }
}

// Into the monitoring stack's own namespace, which exists: base and
// components without components/namespace.
try {
  const objects = renderKustomization(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: monitoring
resources:
  - @REPO@/daemonset/base
components:
  - @REPO@/daemonset/components/kube-prometheus-stack
  - @REPO@/daemonset/components/grafana-dashboards
`);
  checkMoved("base+stack -> monitoring", objects, "monitoring", { expectNamespaceObject: false });
} catch (e) {
  check(false, `base -> monitoring: ${e.message}`);
}
done("check_renamespace");
