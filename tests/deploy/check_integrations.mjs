// The Prometheus-stack integrations of the manifests (docs/deploy.md,
// "Installing into kube-prometheus / kube-prometheus-stack"), offline:
// the discovery and label settings every ServiceMonitor/PodMonitor must
// have, each component's objects (kube-prometheus Role, kube-prometheus-stack
// release label and dashboard ConfigMaps, PodMonitor alternative,
// kube-rbac-proxy, NetworkPolicy), and that the Namespace object is not part
// of the base.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { render, renderKustomization, find, check, done, REPO_ROOT } from "./render.mjs";
import { PodMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";

const sameSet = (a, b) => a.length === b.length && [...a].sort().join() === [...b].sort().join();
const tryRender = (what, fn) => {
  try {
    return fn();
  } catch (e) {
    check(false, `${what}: ${e.message}`);
    return null;
  }
};
const kustomization = (resources, components) => `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
${resources.map((r) => `  - @REPO@/${r}`).join("\n")}
components:
${components.map((c) => `  - @REPO@/daemonset/components/${c}`).join("\n")}
`;

// What every scrape object (ServiceMonitor endpoint or PodMonitor
// podMetricsEndpoint) must set so the series keep the agent's labels.
function checkEndpoint(where, e) {
  check(e.honorLabels === true, `${where}: honorLabels: true`);
  const rl = e.relabelings ?? [];
  const drop = rl.find((r) => r.action === "labeldrop");
  const dropped = drop ? new RegExp(`^(?:${drop.regex})$`) : null;
  check(dropped && ["namespace", "pod", "container"].every((l) => dropped.test(l)) &&
    !["job", "instance", "service", "endpoint"].some((l) => dropped.test(l)),
    `${where}: a labeldrop of exactly the conflicting target labels namespace, pod, container`);
  check(rl.some((r) => r.targetLabel === "instance" && r.sourceLabels?.[0] === "__meta_kubernetes_pod_node_name"),
    `${where}: instance = node name`);
}
function checkMonitors(variant, objects) {
  for (const m of objects.filter((o) => o.kind === "ServiceMonitor" || o.kind === "PodMonitor")) {
    const where = `${variant}: ${m.kind}/${m.metadata.name}`;
    // Without a namespaceSelector a monitor selects its own namespace, which
    // follows a re-namespacing; matchNames would not.
    check(m.spec.namespaceSelector === undefined, `${where}: no namespaceSelector (selects its own namespace)`);
    for (const [i, e] of (m.spec.endpoints ?? m.spec.podMetricsEndpoints ?? []).entries()) {
      checkEndpoint(`${where} endpoint ${i}`, e);
    }
  }
}

// ---- the base has no Namespace; the default install and overlays add it
const base = tryRender("base", () => render("daemonset/base"));
if (base) {
  check(!base.some((o) => o.kind === "Namespace"), "daemonset/base: no Namespace object (components/namespace adds it)");
  checkMonitors("daemonset/base", base);
}
for (const v of ["daemonset", "daemonset/overlays/kube-prometheus", "daemonset/overlays/kube-prometheus-stack",
  "daemonset/overlays/kube-prometheus-secured", "daemonset/overlays/pcap", "daemonset/overlays/sys-admin"]) {
  const objects = tryRender(v, () => render(v));
  if (!objects) continue;
  const ns = objects.filter((o) => o.kind === "Namespace");
  check(ns.length === 1 && ns[0].metadata.name === "trainscope" &&
    ns[0].metadata.labels?.["pod-security.kubernetes.io/enforce"] === "privileged",
  `${v}: one Namespace trainscope with Pod Security enforce=privileged`);
  checkMonitors(v, objects);
}

// ---- kube-prometheus: prometheus-k8s may discover the agent's namespace
const kp = tryRender("kube-prometheus", () => render("daemonset/overlays/kube-prometheus"));
if (kp) {
  const role = find(kp, "Role");
  const rb = find(kp, "RoleBinding");
  const svcNs = find(kp, "Service", "trainscope-agent").metadata.namespace;
  check(role.metadata.namespace === svcNs && rb.metadata.namespace === svcNs,
    "kube-prometheus: the Role and RoleBinding live in the agent's namespace");
  const grants = (group, res) => role.rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(res) &&
    ["get", "list", "watch"].every((verb) => r.verbs.includes(verb)));
  for (const res of ["services", "endpoints", "pods"]) {
    check(grants("", res), `kube-prometheus: the Role grants get/list/watch on ${res}`);
  }
  check(grants("discovery.k8s.io", "endpointslices"), "kube-prometheus: the Role grants endpointslices (role endpointslice)");
  check(role.rules.every((r) => sameSet(r.verbs, ["get", "list", "watch"])), "kube-prometheus: the Role grants read verbs only");
  check(rb.roleRef.kind === "Role" && rb.roleRef.name === role.metadata.name, "kube-prometheus: the RoleBinding binds that Role");
  check(rb.subjects.length === 1 && rb.subjects[0].kind === "ServiceAccount" && rb.subjects[0].name === "prometheus-k8s" &&
    rb.subjects[0].namespace === "monitoring", "kube-prometheus: bound to ServiceAccount monitoring/prometheus-k8s");
  check(!find(kp, "ServiceMonitor").metadata.labels?.release, "kube-prometheus: no release label (that is the stack's)");
}

// ---- kube-prometheus-stack: release label, dashboards as ConfigMaps
const st = tryRender("kube-prometheus-stack", () => render("daemonset/overlays/kube-prometheus-stack"));
if (st) {
  for (const kind of ["ServiceMonitor", "PrometheusRule"]) {
    check(find(st, kind).metadata.labels?.release === "kube-prometheus-stack",
      `kube-prometheus-stack: ${kind} labelled release: kube-prometheus-stack`);
  }
  check(!find(st, "DaemonSet").metadata.labels?.release, "kube-prometheus-stack: the release label only on the monitoring objects");
  const cms = st.filter((o) => o.kind === "ConfigMap");
  const files = ["trainscope-training-job.json", "trainscope-cluster-overview.json", "trainscope-agent-health.json"];
  check(cms.length === files.length, `kube-prometheus-stack: ${files.length} dashboard ConfigMaps, found ${cms.length}`);
  for (const f of files) {
    const cm = cms.find((c) => c.data?.[f] !== undefined);
    if (!cm) { check(false, `kube-prometheus-stack: no ConfigMap holds ${f}`); continue; }
    check(cm.metadata.labels?.grafana_dashboard === "1", `${cm.metadata.name}: labelled grafana_dashboard: "1"`);
    check(cm.metadata.namespace === "trainscope", `${cm.metadata.name}: in the agent's namespace`);
    check(cm.data[f] === readFileSync(join(REPO_ROOT, "dashboards", f), "utf8"),
      `${cm.metadata.name}: ${f} is dashboards/${f} (run python3 dashboards/mixin/generate.py)`);
    check(Buffer.byteLength(JSON.stringify(cm)) < 256 * 1024, `${cm.metadata.name}: below kubectl apply's 256 KiB annotation limit`);
  }
}
// Another release name is one patch in the user's overlay (docs/deploy.md).
const rel = tryRender("release patch", () => renderKustomization(kustomization(["daemonset/overlays/kube-prometheus-stack"], []) +
  `patches:
  - target: {group: monitoring.coreos.com, kind: (ServiceMonitor|PodMonitor|PrometheusRule)}
    patch: |-
      - {op: replace, path: /metadata/labels/release, value: prom}
`));
if (rel) check(find(rel, "ServiceMonitor").metadata.labels?.release === "prom", "the documented release patch sets release: prom");

// ---- PodMonitor instead of ServiceMonitor
const pm = tryRender("podmonitor", () => renderKustomization(kustomization(["daemonset/base"], ["podmonitor", "kube-prometheus-stack"])));
if (pm) {
  check(!pm.some((o) => o.kind === "ServiceMonitor" || o.kind === "Service"), "podmonitor: no ServiceMonitor and no Service left");
  const mon = find(pm, "PodMonitor", "trainscope-agent");
  try {
    new PodMonitor(mon).validate();
    check(true, "podmonitor: schema");
  } catch (e) {
    check(false, `podmonitor: schema: ${e.message}`);
  }
  checkMonitors("podmonitor", pm);
  const ds = find(pm, "DaemonSet");
  const podLabels = ds.spec.template.metadata.labels;
  check(Object.entries(mon.spec.selector.matchLabels).every(([k, v]) => podLabels[k] === v), "podmonitor: selects the agent pods");
  check(podLabels[mon.spec.jobLabel] === "trainscope-agent", 'podmonitor: job label "trainscope-agent"');
  const ports = ds.spec.template.spec.containers.flatMap((c) => c.ports ?? []);
  check(mon.spec.podMetricsEndpoints.every((e) => ports.some((p) => p.name === e.port)), "podmonitor: scrapes a named container port");
  check(mon.metadata.labels?.release === "kube-prometheus-stack", "podmonitor: the stack component labels it too");
  const sm = find(base ?? [], "ServiceMonitor");
  check(JSON.stringify(mon.spec.podMetricsEndpoints[0].relabelings) === JSON.stringify(sm.spec.endpoints[0].relabelings),
    "podmonitor: the same relabelings as the ServiceMonitor");
}

// ---- kube-rbac-proxy and NetworkPolicy
const sec = tryRender("kube-prometheus-secured", () => render("daemonset/overlays/kube-prometheus-secured"));
if (sec) {
  const ns = find(sec, "ServiceAccount", "trainscope-agent").metadata.namespace;
  const pod = find(sec, "DaemonSet").spec.template.spec;
  const agent = pod.containers.find((c) => c.name === "agent");
  const proxy = pod.containers.find((c) => c.name === "kube-rbac-proxy");
  check(agent && proxy, "secured: agent and kube-rbac-proxy containers");
  if (agent && proxy) {
    const listen = agent.args.filter((a) => a.startsWith("--listen"));
    check(sameSet(listen, ["--listen=127.0.0.1:9476"]), `secured: the agent listens on 127.0.0.1:9476 only, args ${listen}`);
    check(!(agent.ports ?? []).length, "secured: the agent container exposes no port");
    const arg = (name) => proxy.args.find((a) => a.startsWith(`--${name}=`))?.split("=").slice(1).join("=");
    check(arg("upstream") === "http://127.0.0.1:9476/", "secured: the proxy's upstream is the agent on 127.0.0.1:9476");
    check(arg("secure-listen-address") === "$(POD_IP):9476" &&
      proxy.env?.some((e) => e.name === "POD_IP" && e.valueFrom?.fieldRef?.fieldPath === "status.podIP"),
    "secured: the proxy serves https on the pod IP's port 9476");
    check(sameSet(arg("ignore-paths")?.split(",") ?? [], ["/healthz", "/readyz"]), "secured: only /healthz and /readyz pass without a token");
    check(!proxy.args.some((a) => a.startsWith("--insecure-listen-address")), "secured: no plain-HTTP listener on the proxy");
    check(proxy.ports?.some((p) => p.name === "https" && p.containerPort === 9476), "secured: proxy port https = 9476");
    for (const probe of ["livenessProbe", "readinessProbe"]) {
      const g = agent[probe]?.httpGet;
      check(g?.scheme === "HTTPS" && g.port === 9476 && arg("ignore-paths").split(",").includes(g.path),
        `secured: the agent's ${probe} goes through the proxy over HTTPS to an ignored path`);
    }
    const sc = proxy.securityContext ?? {};
    check(sc.runAsNonRoot === true && sc.readOnlyRootFilesystem === true && sc.allowPrivilegeEscalation === false &&
      sameSet(sc.capabilities?.drop ?? [], ["ALL"]) && !(sc.capabilities?.add ?? []).length,
    "secured: the proxy runs as non-root without capabilities");
    check(proxy.resources?.limits?.cpu && proxy.resources?.limits?.memory, "secured: the proxy has limits");
  }
  const svc = find(sec, "Service", "trainscope-agent");
  check(svc.spec.ports.length === 1 && svc.spec.ports[0].name === "https" && svc.spec.ports[0].targetPort === "https",
    "secured: the Service exposes the proxy's https port only");
  const e = find(sec, "ServiceMonitor").spec.endpoints;
  check(e.length === 1 && e[0].port === "https" && e[0].scheme === "https", "secured: the ServiceMonitor scrapes https");
  check(e[0]?.bearerTokenFile === "/var/run/secrets/kubernetes.io/serviceaccount/token",
    "secured: Prometheus sends its service-account token");
  check(e[0]?.tlsConfig !== undefined, "secured: a tlsConfig");
  const roleFor = (crb) => find(sec, "ClusterRole", crb.roleRef.name);
  const bindings = sec.filter((o) => o.kind === "ClusterRoleBinding");
  const proxyBinding = bindings.find((b) => roleFor(b).rules.some((r) => r.resources?.includes("tokenreviews")));
  check(proxyBinding && proxyBinding.subjects.some((s) => s.name === "trainscope-agent" && s.namespace === ns),
    "secured: the agent's service account (the proxy's) may create tokenreviews");
  if (proxyBinding) {
    const rules = roleFor(proxyBinding).rules;
    check(rules.some((r) => r.apiGroups.includes("authentication.k8s.io") && r.resources.includes("tokenreviews") && sameSet(r.verbs, ["create"])) &&
      rules.some((r) => r.apiGroups.includes("authorization.k8s.io") && r.resources.includes("subjectaccessreviews") && sameSet(r.verbs, ["create"])),
    "secured: the proxy's ClusterRole: create tokenreviews and subjectaccessreviews, nothing else");
  }
  const readerBinding = bindings.find((b) => roleFor(b).rules.some((r) => r.nonResourceURLs));
  check(readerBinding && sameSet(roleFor(readerBinding).rules.flatMap((r) => r.nonResourceURLs ?? []), ["/metrics"]) &&
    roleFor(readerBinding).rules.every((r) => sameSet(r.verbs, ["get"])),
  "secured: a ClusterRole granting get on /metrics only");
  check(readerBinding?.subjects.some((s) => s.name === "prometheus-k8s" && s.namespace === "monitoring"),
    "secured: bound to monitoring/prometheus-k8s");
  const np = find(sec, "NetworkPolicy");
  const podLabels = find(sec, "DaemonSet").spec.template.metadata.labels;
  check(Object.entries(np.spec.podSelector.matchLabels).every(([k, v]) => podLabels[k] === v), "network-policy: selects the agent pods");
  check(sameSet(np.spec.policyTypes, ["Ingress"]) && np.spec.ingress.length === 1, "network-policy: one ingress rule");
  const rule = np.spec.ingress[0];
  check(rule.from.length === 1 && rule.from[0].namespaceSelector?.matchLabels?.["kubernetes.io/metadata.name"] === "monitoring" &&
    !rule.from[0].podSelector && !rule.from[0].ipBlock, "network-policy: from the monitoring namespace only");
  check(rule.ports.length === 1 && rule.ports[0].port === 9476, "network-policy: to port 9476 only");
}

// ---- built-in TLS and authentication (--web-config-file)
const wc = tryRender("web-config", () => renderKustomization(
  kustomization(["daemonset/overlays/kube-prometheus-stack"], ["web-config"])));
if (wc) {
  const pod = find(wc, "DaemonSet").spec.template.spec;
  const agent = pod.containers[0];
  const flag = agent.args.find((a) => a.startsWith("--web-config-file="));
  const file = flag?.split("=")[1] ?? "";
  const mount = agent.volumeMounts.find((m) => file.startsWith(m.mountPath + "/"));
  check(flag && mount && mount.readOnly === true, "web-config: --web-config-file points into a read-only mount");
  const vol = pod.volumes.find((v) => v.name === mount?.name);
  check(vol?.secret?.secretName === "trainscope-web-config", "web-config: the mount is the Secret trainscope-web-config");
  check(agent.args.some((a) => a === "--listen=0.0.0.0:9476"), "web-config: the agent still serves the pod IP");
  for (const probe of ["livenessProbe", "readinessProbe"]) {
    check(agent[probe].httpGet.scheme === "HTTPS", `web-config: ${probe} over HTTPS`);
  }
  const e = find(wc, "ServiceMonitor").spec.endpoints[0];
  check(e.scheme === "https" && e.port === "metrics", "web-config: the ServiceMonitor scrapes https on the metrics port");
  check(e.tlsConfig?.ca?.secret?.name === "trainscope-web-config" && e.tlsConfig.ca.secret.key === "ca.crt" &&
    e.tlsConfig.serverName === "trainscope-agent" && !e.tlsConfig.insecureSkipVerify,
  "web-config: Prometheus verifies the certificate (ca.crt, serverName trainscope-agent)");
  check(e.authorization?.type === "Bearer" && e.authorization.credentials?.name === "trainscope-web-config" &&
    e.authorization.credentials.key === "token", "web-config: Prometheus sends the token of the Secret");
  checkMonitors("web-config", wc);
  try {
    new ServiceMonitor(find(wc, "ServiceMonitor")).validate();
    check(true, "web-config: ServiceMonitor schema");
  } catch (err) {
    check(false, `web-config: ServiceMonitor schema: ${err.message}`);
  }
}

done("check_integrations");
