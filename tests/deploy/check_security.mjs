// The security properties of the rendered manifests (docs/deploy.md,
// "Privileges"): no privileged container, no hostNetwork except in the pcap
// overlay, all capabilities dropped and only the documented ones added
// (SYS_ADMIN only in the sys-admin overlay), read-only root file system, no
// privilege escalation, read-only host mounts, RBAC get/list/watch on pods only.
import { render, find, check, done } from "./render.mjs";

const BASE_CAPS = ["BPF", "PERFMON", "NET_ADMIN", "NET_RAW", "SYS_PTRACE", "DAC_READ_SEARCH", "SYSLOG"];
const expect = {
  "daemonset": { hostNetwork: false, caps: BASE_CAPS, flows: "ebpf" },
  "daemonset/overlays/pcap": { hostNetwork: true, caps: ["NET_RAW", "SYS_PTRACE", "DAC_READ_SEARCH"], flows: "pcap" },
  "daemonset/overlays/sys-admin": { hostNetwork: false, caps: [...BASE_CAPS, "SYS_ADMIN"], flows: "ebpf" },
};
const sameSet = (a, b) => a.length === b.length && [...a].sort().join() === [...b].sort().join();

for (const [variant, want] of Object.entries(expect)) {
  let objects;
  try {
    objects = render(variant);
  } catch (e) {
    check(false, e.message);
    continue;
  }
  const v = (m) => `${variant}: ${m}`;
  const ds = find(objects, "DaemonSet", "trainscope-agent");
  const pod = ds.spec.template.spec;
  check((pod.hostNetwork ?? false) === want.hostNetwork, v(`hostNetwork is ${pod.hostNetwork}, want ${want.hostNetwork}`));
  check(pod.hostPID === true, v("hostPID must be true (process -> pod mapping, node network counters)"));
  check(!pod.hostIPC, v("hostIPC must not be set"));
  check(pod.serviceAccountName === "trainscope-agent", v("runs as the trainscope-agent service account"));
  check(typeof pod.priorityClassName === "string" && objects.some((o) => o.kind === "PriorityClass" && o.metadata.name === pod.priorityClassName),
    v("priorityClassName names a PriorityClass that is deployed"));
  check(ds.spec.updateStrategy?.type === "RollingUpdate" && ds.spec.updateStrategy.rollingUpdate?.maxUnavailable !== undefined,
    v("RollingUpdate with maxUnavailable"));
  const tolerates = (key) => (pod.tolerations ?? []).some((t) => t.operator === "Exists" && (t.key === undefined || t.key === key));
  check(tolerates("nvidia.com/gpu"), v("tolerates nvidia.com/gpu"));
  check((pod.tolerations ?? []).some((t) => t.operator === "Exists" && t.key === undefined), v("tolerates every taint (operator Exists)"));

  for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
    const w = (m) => v(`container ${c.name}: ${m}`);
    const sc = c.securityContext ?? {};
    check(sc.privileged !== true, w("must not be privileged"));
    check(sc.allowPrivilegeEscalation === false, w("allowPrivilegeEscalation must be false"));
    check(sc.readOnlyRootFilesystem === true, w("readOnlyRootFilesystem must be true"));
    check(sameSet(sc.capabilities?.drop ?? [], ["ALL"]), w("capabilities.drop must be [ALL]"));
    check(sameSet(sc.capabilities?.add ?? [], want.caps),
      w(`capabilities.add is [${sc.capabilities?.add}], want exactly [${want.caps}]`));
    check(!(sc.capabilities?.add ?? []).includes("SYS_ADMIN") || variant.endsWith("sys-admin"),
      w("SYS_ADMIN only in the sys-admin overlay"));
    check(sc.seccompProfile?.type === "RuntimeDefault", w("seccompProfile RuntimeDefault"));
    const hostVols = new Map((pod.volumes ?? []).filter((x) => x.hostPath).map((x) => [x.name, x.hostPath.path]));
    const mounts = new Map((c.volumeMounts ?? []).map((m) => [m.name, m]));
    for (const [name, path] of hostVols) {
      check(mounts.get(name)?.readOnly === true, w(`hostPath ${path} must be mounted readOnly`));
    }
    const want_mounts = { "/proc": "/host/proc", "/sys": "/host/sys", "/sys/fs/cgroup": "/host/sys/fs/cgroup" };
    for (const [hp, mp] of Object.entries(want_mounts)) {
      const vol = [...hostVols].find(([, p]) => p === hp);
      check(vol && mounts.get(vol[0])?.mountPath === mp, w(`host ${hp} mounted at ${mp}`));
    }
    check(hostVols.size === 3, w(`exactly the 3 documented hostPath volumes, found ${[...hostVols.values()]}`));
    const args = c.args ?? [];
    check(args.includes("--host-proc=/host/proc") && args.includes("--host-sys=/host/sys") &&
      args.includes("--cgroup-root=/host/sys/fs/cgroup"), w("agent flags point at the /host mounts"));
    const env = new Map((c.env ?? []).map((e) => [e.name, e]));
    check(env.get("NODE_NAME")?.valueFrom?.fieldRef?.fieldPath === "spec.nodeName", w("NODE_NAME from the downward API"));
    check(env.get("TRAINSCOPE_FLOWS")?.value === want.flows, w(`TRAINSCOPE_FLOWS=${want.flows}`));
    check(!args.some((a) => a.startsWith("--flows")), w("--flows must not be a flag (it would win over the overlay's TRAINSCOPE_FLOWS)"));
    check(env.get("NVIDIA_VISIBLE_DEVICES")?.value === "all" && env.get("NVIDIA_DRIVER_CAPABILITIES")?.value === "utility",
      w("NVIDIA_VISIBLE_DEVICES=all, NVIDIA_DRIVER_CAPABILITIES=utility"));
    check(!JSON.stringify(c.resources ?? {}).includes("nvidia.com/gpu"), w("must not request nvidia.com/gpu"));
    check(c.resources?.requests?.cpu && c.resources?.requests?.memory && c.resources?.limits?.cpu && c.resources?.limits?.memory,
      w("CPU and memory requests and limits"));
    check(c.livenessProbe?.httpGet?.path === "/healthz", w("liveness on /healthz"));
    check(c.readinessProbe?.httpGet?.path === "/readyz", w("readiness on /readyz"));
    check((c.ports ?? []).some((p) => p.name === "metrics" && p.containerPort === 9476), w("named port metrics = 9476"));
  }

  // RBAC: exactly get/list/watch on pods, nothing else anywhere.
  const roles = objects.filter((o) => o.kind === "ClusterRole" || o.kind === "Role");
  check(roles.length === 1, v(`exactly one (Cluster)Role, found ${roles.length}`));
  for (const r of roles) {
    for (const rule of r.rules ?? []) {
      check(sameSet(rule.apiGroups ?? [], [""]), v(`${r.kind} ${r.metadata.name}: apiGroups must be [""]`));
      check(sameSet(rule.resources ?? [], ["pods"]), v(`${r.kind} ${r.metadata.name}: resources must be [pods], got [${rule.resources}]`));
      check(sameSet(rule.verbs ?? [], ["get", "list", "watch"]), v(`${r.kind} ${r.metadata.name}: verbs must be get/list/watch, got [${rule.verbs}]`));
      check(!rule.nonResourceURLs && !rule.resourceNames, v(`${r.kind} ${r.metadata.name}: no nonResourceURLs/resourceNames`));
    }
    check(!r.aggregationRule, v(`${r.kind} ${r.metadata.name}: no aggregationRule`));
  }
  const binding = find(objects, "ClusterRoleBinding", "trainscope-agent");
  check(binding.roleRef.name === "trainscope-agent" && binding.subjects.length === 1 &&
    binding.subjects[0].kind === "ServiceAccount" && binding.subjects[0].name === "trainscope-agent",
    v("the ClusterRoleBinding binds only the agent's service account"));

  const svc = find(objects, "Service", "trainscope-agent");
  check(svc.spec.clusterIP === "None", v("the Service is headless"));
  check(svc.spec.ports.some((p) => p.name === "metrics" && p.port === 9476), v("the Service has the named metrics port 9476"));
  const sm = find(objects, "ServiceMonitor", "trainscope-agent");
  check(sm.spec.endpoints.some((e) => e.port === "metrics"), v("the ServiceMonitor scrapes the metrics port"));
  const selects = Object.entries(sm.spec.selector.matchLabels).every(([k, val]) => svc.metadata.labels?.[k] === val);
  check(selects, v("the ServiceMonitor selects the Service's labels"));
  // The agent's namespace/pod/container labels must win over the Operator's
  // target labels of the same names (else exported_pod etc.).
  check(sm.spec.endpoints.every((e) => e.honorLabels === true),
    v("every ServiceMonitor endpoint sets honorLabels: true"));
  // Cross-node peers are named by the cluster-wide watch of training pods:
  // it needs the ClusterRole bound cluster-wide and must not be turned off.
  check(binding.roleRef.kind === "ClusterRole",
    v("pods are readable in every namespace (ClusterRoleBinding to a ClusterRole) for the peer-pod watch"));
  for (const c of pod.containers ?? []) {
    const off = (c.args ?? []).some((a) => /^--peer-pods-selector=(off)?$/.test(a)) ||
      (c.env ?? []).some((e) => e.name === "TRAINSCOPE_PEER_PODS_SELECTOR" && ["", "off"].includes(e.value));
    check(!off, v(`container ${c.name} keeps the peer-pod watch on (cross-node peers)`));
  }
  check(svc.metadata.labels?.[sm.spec.jobLabel] === "trainscope-agent",
    v('the scrape job label is "trainscope-agent" (the rules select job="trainscope-agent")'));
}
done("check_security");
