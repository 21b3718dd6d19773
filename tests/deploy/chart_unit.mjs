// Unit tests of the Helm chart in the style of the prometheus-community
// charts' (helm-unittest): given values X, `helm template` (the real helm)
// renders object Y with field Z; values the schema or the templates refuse
// fail with a message naming them. Every object of every case also
// validates against the Kubernetes and Prometheus Operator schemas (as
// validate_manifests.mjs does for kustomize), and the packaged chart
// (`helm package`) renders what the chart directory renders. Every value
// of values.yaml is documented in docs/deploy.md.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnSync } from "node:child_process";
import YAML from "yaml";
import { REPO_ROOT, check, done } from "./render.mjs";
import { CHART, NAMESPACE, helm, template, templateError } from "./chart_render.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const find = (objs, kind, name) => objs.find((o) => o.kind === kind && (!name || o.metadata.name === name));
const agentOf = (objs) => find(objs, "DaemonSet").spec.template.spec.containers.find((c) => c.name === "agent");
const podOf = (objs) => find(objs, "DaemonSet").spec.template.spec;
const envOf = (c, name) => c.env.find((e) => e.name === name)?.value;
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const rulesSource = YAML.parse(readFileSync(join(REPO_ROOT, "dashboards/alerts.yaml"), "utf8"));
const dashboardSources = readdirSync(join(REPO_ROOT, "dashboards")).filter((f) => f.endsWith(".json"));
const defaultArgs = ["--listen=0.0.0.0:9476", "--discovery=apiserver", "--host-proc=/host/proc",
  "--host-sys=/host/sys", "--cgroup-root=/host/sys/fs/cgroup", "--training-ports=2222"];

// [name, values, assertions(objects) -> [[ok, what], ...]]
const CASES = [
  ["defaults", {}, (o) => [
    [agentOf(o).image === "ghcr.io/trainscope/trainscope-agent:0.1.0", "image from appVersion"],
    [same(agentOf(o).args, defaultArgs), `args ${JSON.stringify(agentOf(o).args)}`],
    [envOf(agentOf(o), "TRAINSCOPE_FLOWS") === "ebpf", "flows ebpf"],
    [podOf(o).hostNetwork === false && podOf(o).hostPID === true, "hostPID, no hostNetwork"],
    [podOf(o).priorityClassName === "trainscope-node-critical", "priorityClassName"],
    [find(o, "PriorityClass", "trainscope-node-critical")?.value === 1000000, "PriorityClass made"],
    [find(o, "ServiceMonitor") && find(o, "Service") && !find(o, "PodMonitor"), "ServiceMonitor and Service"],
    [same(find(o, "PrometheusRule").spec, rulesSource), "PrometheusRule spec = dashboards/alerts.yaml"],
    [!find(o, "ConfigMap") && !find(o, "Secret") && !find(o, "NetworkPolicy") && !find(o, "Role"),
      "no optional object"],
    [o.every((x) => x.metadata.labels["app.kubernetes.io/instance"] === "trainscope"), "instance label"],
    [o.filter((x) => x.metadata.namespace).every((x) => x.metadata.namespace === NAMESPACE), "release namespace"],
  ]],
  ["image, resources, scheduling", {
    image: { repository: "registry.example/ts", tag: "0.2.0", pullPolicy: "Always" },
    imagePullSecrets: [{ name: "pull" }],
    resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { memory: "256Mi" } },
    nodeSelector: { "node-role/gpu": "true" },
    tolerations: [{ key: "dedicated", operator: "Equal", value: "training", effect: "NoSchedule" }],
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [
      { matchExpressions: [{ key: "gpu", operator: "Exists" }] }] } } },
    priorityClassName: "system-node-critical", priorityClass: { create: false },
    podAnnotations: { "example/a": "1" }, podLabels: { team: "ml" },
  }, (o) => [
    [agentOf(o).image === "registry.example/ts:0.2.0" && agentOf(o).imagePullPolicy === "Always", "image"],
    [same(podOf(o).imagePullSecrets, [{ name: "pull" }]), "imagePullSecrets"],
    // Helm merges maps with the defaults: limits.cpu stays (null drops it,
    // below).
    [same(agentOf(o).resources, { limits: { cpu: "200m", memory: "256Mi" }, requests: { cpu: "50m", memory: "64Mi" } }),
      `resources ${JSON.stringify(agentOf(o).resources)}`],
    [same(podOf(o).nodeSelector, { "kubernetes.io/os": "linux", "node-role/gpu": "true" }), "nodeSelector merged"],
    [podOf(o).tolerations.length === 1 && podOf(o).tolerations[0].key === "dedicated", "tolerations replaced"],
    [podOf(o).affinity?.nodeAffinity !== undefined, "affinity"],
    [podOf(o).priorityClassName === "system-node-critical" && !find(o, "PriorityClass"), "existing priority class"],
    [find(o, "DaemonSet").spec.template.metadata.annotations["example/a"] === "1", "podAnnotations"],
    [find(o, "DaemonSet").spec.template.metadata.labels.team === "ml" &&
      same(find(o, "DaemonSet").spec.selector.matchLabels, { "app.kubernetes.io/name": "trainscope-agent" }),
      "podLabels, selector unchanged"],
  ]],
  ["defaults dropped with null", { resources: { limits: { cpu: null } }, nodeSelector: { "kubernetes.io/os": null } },
    (o) => [
      [same(agentOf(o).resources.limits, { memory: "128Mi" }), "no CPU limit"],
      [podOf(o).nodeSelector === undefined, "no nodeSelector"],
    ]],
  ["no priority class", { priorityClassName: "" }, (o) => [
    [podOf(o).priorityClassName === undefined && !find(o, "PriorityClass"), "neither field nor object"],
  ]],
  ["agent flags", {
    agent: {
      flags: { discovery: null, interval: 2.5, "pcap-buffer-bytes": 33554432, "log-format": "json",
        "pod-namespaces": "", "step-burst-gap": 0, profiler: false, "profile-continuous-offcpu": "on" },
      extraArgs: ["--history=120"], extraEnv: [{ name: "TZ", value: "UTC" }],
      nvidia: { visibleDevices: "" },
    },
  }, (o) => [
    [same(agentOf(o).args, ["--listen=0.0.0.0:9476", "--host-proc=/host/proc", "--host-sys=/host/sys",
      "--cgroup-root=/host/sys/fs/cgroup", "--interval=2.5", "--log-format=json", "--pcap-buffer-bytes=33554432",
      "--pod-namespaces=", "--profile-continuous-offcpu=on", "--profiler=off", "--step-burst-gap=0",
      "--training-ports=2222", "--history=120"]),
      `flags by name, whole numbers as integers, booleans as on/off, null drops one: ${JSON.stringify(agentOf(o).args)}`],
    [envOf(agentOf(o), "TZ") === "UTC", "extraEnv"],
    [envOf(agentOf(o), "NVIDIA_VISIBLE_DEVICES") === undefined, "no NVIDIA variables"],
  ]],
  ["port", { agent: { port: 9100 }, networkPolicy: { enabled: true } }, (o) => [
    [agentOf(o).args[0] === "--listen=0.0.0.0:9100" && agentOf(o).ports[0].containerPort === 9100, "listen, port"],
    [find(o, "Service").spec.ports[0].port === 9100, "Service port"],
    [find(o, "NetworkPolicy").spec.ingress[0].ports[0].port === 9100, "NetworkPolicy port"],
  ]],
  ["pcap", { agent: { flows: "pcap" } }, (o) => [
    [podOf(o).hostNetwork === true && podOf(o).dnsPolicy === "ClusterFirstWithHostNet", "host network"],
    [same(agentOf(o).securityContext.capabilities.add, ["NET_RAW", "SYS_PTRACE", "DAC_READ_SEARCH"]), "no BPF caps"],
    [envOf(agentOf(o), "TRAINSCOPE_FLOWS") === "pcap", "TRAINSCOPE_FLOWS"],
  ]],
  ["sys-admin", { agent: { sysAdmin: true } }, (o) => [
    [agentOf(o).securityContext.capabilities.add.at(-1) === "SYS_ADMIN", "SYS_ADMIN added"],
  ]],
  ["kube-prometheus-stack values", YAML.parse(readFileSync(join(CHART, "ci/kube-prometheus-stack-values.yaml"), "utf8")),
    (o) => [
      [find(o, "ServiceMonitor").metadata.labels.release === "kube-prometheus-stack", "ServiceMonitor release label"],
      [find(o, "PrometheusRule").metadata.labels.release === "kube-prometheus-stack", "PrometheusRule release label"],
      [o.filter((x) => x.kind === "ConfigMap").length === dashboardSources.length, "a ConfigMap per dashboard"],
      ...dashboardSources.map((f) => {
        const cm = o.find((x) => x.kind === "ConfigMap" && x.data?.[f] !== undefined);
        return [cm?.metadata.labels.grafana_dashboard === "1" &&
          cm.data[f] === readFileSync(join(REPO_ROOT, "dashboards", f), "utf8"),
          `ConfigMap of ${f}: sidecar label, the dashboard byte for byte`];
      }),
    ]],
  ["dashboards elsewhere", { dashboards: { enabled: true, namespace: "monitoring", labels: { grafana_dashboard: "yes" } } },
    (o) => [
      [o.filter((x) => x.kind === "ConfigMap").every((x) => x.metadata.namespace === "monitoring" &&
        x.metadata.labels.grafana_dashboard === "yes"), "namespace and label"],
    ]],
  ["podmonitor", { podMonitor: { enabled: true, additionalLabels: { release: "prom" }, interval: "30s" } }, (o) => [
    [!find(o, "ServiceMonitor") && !find(o, "Service"), "no ServiceMonitor, no Service"],
    [find(o, "PodMonitor").metadata.labels.release === "prom", "labels"],
    [find(o, "PodMonitor").spec.podMetricsEndpoints[0].interval === "30s", "interval"],
  ]],
  ["kube-rbac-proxy", {
    kubeRbacProxy: { enabled: true, metricsReaders: [{ kind: "ServiceAccount", name: "prom", namespace: "obs" }] },
  }, (o) => [
    [agentOf(o).args[0] === "--listen=127.0.0.1:9476" && agentOf(o).ports === undefined, "agent on loopback"],
    [podOf(o).containers[1].name === "kube-rbac-proxy" && podOf(o).containers[1].ports[0].name === "https", "proxy"],
    [agentOf(o).livenessProbe.httpGet.scheme === "HTTPS" && agentOf(o).livenessProbe.httpGet.port === 9476,
      "probes through the proxy"],
    [find(o, "ServiceMonitor").spec.endpoints[0].scheme === "https" &&
      find(o, "ServiceMonitor").spec.endpoints[0].port === "https", "ServiceMonitor https"],
    [same(find(o, "ClusterRoleBinding", "trainscope-metrics-reader").subjects,
      [{ kind: "ServiceAccount", name: "prom", namespace: "obs" }]), "metrics readers"],
  ]],
  ["cli access for a group", {
    cliAccess: { create: true, subjects: [{ kind: "Group", name: "ml-oncall", apiGroup: "rbac.authorization.k8s.io" }] },
  }, (o) => [
    [find(o, "Role", "trainscope-cli").metadata.namespace === NAMESPACE &&
      same(find(o, "Role", "trainscope-cli").rules.map((r) => r.resources[0]), ["pods", "pods/proxy"]),
      "a Role in the release namespace: pods and pods/proxy"],
    [same(find(o, "RoleBinding", "trainscope-cli").subjects[0].name, "ml-oncall"), "bound to the group"],
  ]],
  ["cli access, no subjects", { cliAccess: { create: true } }, (o) => [
    [find(o, "Role", "trainscope-cli") && !find(o, "RoleBinding", "trainscope-cli"), "the role, no binding"],
  ]],
  ["kube-rbac-proxy, no readers", { kubeRbacProxy: { enabled: true, metricsReaders: [] } }, (o) => [
    [!find(o, "ClusterRoleBinding", "trainscope-metrics-reader") && find(o, "ClusterRole", "trainscope-metrics-reader"),
      "the role, no binding"],
  ]],
  ["web config, your Secret, with a PodMonitor", { webConfig: { enabled: true, secretName: "mine" }, podMonitor: { enabled: true } },
    (o) => {
      const ep = find(o, "PodMonitor").spec.podMetricsEndpoints[0];
      return [
        [!find(o, "Secret"), "no Secret made"],
        [podOf(o).volumes.at(-1).secret.secretName === "mine", "mounts it"],
        [agentOf(o).args.at(-1) === "--web-config-file=/etc/trainscope/web/web-config.yml", "flag"],
        [ep.scheme === "https" && ep.tlsConfig.ca.secret.name === "mine" && ep.authorization.credentials.key === "token",
          "PodMonitor https with the bearer token"],
      ];
    }],
  ["web config made, TLS and bearer", {
    webConfig: { enabled: true, create: true, tls: { crt: "CRT", key: "KEY", ca: "CA" }, bearerToken: "tok" },
  }, (o) => {
    const s = find(o, "Secret", "trainscope-web-config");
    const web = YAML.parse(s.stringData["web-config.yml"]);
    return [
      [same(web, { tls_server_config: { cert_file: "tls.crt", key_file: "tls.key" },
        authorization: { type: "Bearer", credentials_file: "token" } }), `web-config.yml ${JSON.stringify(web)}`],
      [s.stringData.token === "tok" && s.stringData["ca.crt"] === "CA", "token, ca.crt"],
      [/^[0-9a-f]{64}$/.test(find(o, "DaemonSet").spec.template.metadata.annotations["checksum/web-config"]),
        "pods restart when it changes"],
      [agentOf(o).readinessProbe.httpGet.scheme === "HTTPS", "probes https"],
    ];
  }],
  ["web config made, basic auth without TLS", {
    webConfig: { enabled: true, create: true, auth: "basic", basicAuth: { username: "prom", password: "secret" } },
  }, (o) => {
    const s = find(o, "Secret", "trainscope-web-config");
    const web = YAML.parse(s.stringData["web-config.yml"]);
    const ep = find(o, "ServiceMonitor").spec.endpoints[0];
    return [
      [/^\$2a\$10\$.{53}$/.test(web.basic_auth_users?.prom ?? ""), `bcrypt hash ${JSON.stringify(web)}`],
      [web.tls_server_config === undefined && ep.scheme === undefined && ep.tlsConfig === undefined, "plain http"],
      [ep.basicAuth?.password.key === "password" && s.stringData.password === "secret", "basicAuth"],
      [agentOf(o).readinessProbe.httpGet.scheme === undefined, "probes http"],
    ];
  }],
];

// [name, values, what helm's message must contain]
const REFUSED = [
  ["misspelt flag", { agent: { flags: { intervall: 5 } } }, "intervall"],
  ["flag the chart sets", { agent: { flags: { listen: "0.0.0.0:1" } } }, "listen"],
  ["flag below its minimum", { agent: { flags: { interval: 0 } } }, "interval"],
  ["flag not a choice", { agent: { flags: { "log-format": "xml" } } }, "log-format"],
  ["boolean for a flag without on/off", { agent: { flags: { "log-format": true } } }, "log-format"],
  ["number for a text flag", { agent: { flags: { "training-ports": 2222 } } }, "training-ports"],
  ["flows", { agent: { flows: "bpf" } }, "flows"],
  ["web config auth", { webConfig: { auth: "digest" } }, "auth"],
  ["scrape interval", { serviceMonitor: { interval: "15" } }, "interval"],
  ["proxy and web config", { kubeRbacProxy: { enabled: true }, webConfig: { enabled: true } }, "exclude each other"],
  ["bearer without a token", { webConfig: { enabled: true, create: true } }, "bearerToken"],
  ["certificate without key", { webConfig: { enabled: true, create: true, auth: "none", tls: { crt: "C" } } }, "needs key"],
];

function schemaModule(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  return group === "monitoring.coreos.com"
    ? `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}.js`
    : `kubernetes-models/${group ? group + "/" : ""}${version}/${kind}.js`;
}

async function validate(name, objects) {
  for (const obj of objects) {
    const mod = schemaModule(obj.apiVersion, obj.kind);
    const where = `${name}: ${obj.kind}/${obj.metadata?.name}`;
    if (!existsSync(join(here, "node_modules", mod))) {
      check(false, `${where}: no schema (${mod})`);
      continue;
    }
    const Model = (await import(mod.replace(/\.js$/, "")))[obj.kind];
    try {
      new Model(obj).validate();
      check(true, where);
    } catch (e) {
      check(false, `${where}: ${e.message}`);
    }
  }
}

for (const [name, values, assertions] of CASES) {
  let objects;
  try {
    objects = template(values);
  } catch (e) {
    check(false, `${name}: ${e.message}`);
    continue;
  }
  for (const [ok, what] of assertions(objects)) check(Boolean(ok), `${name}: ${what}`);
  await validate(name, objects);
}

for (const [name, values, message] of REFUSED) {
  const err = templateError(values);
  check(err !== null && err.includes(message), `${name}: helm must refuse ${JSON.stringify(values)} naming "${message}"; got ${err ?? "success"}`);
}

// The packaged chart carries files/ (the rules and dashboards) and renders
// what the directory renders.
const pkgDir = mkdtempSync(join(tmpdir(), "trainscope-chart-pkg-"));
try {
  const r = spawnSync(helm(), ["package", CHART, "--destination", pkgDir], { encoding: "utf8" });
  check(r.status === 0, `helm package: ${r.stderr}`);
  const tgz = readdirSync(pkgDir).find((f) => f.endsWith(".tgz"));
  const values = { dashboards: { enabled: true } };
  check(tgz && same(template(values, { chart: join(pkgDir, tgz) }), template(values)),
    "the packaged chart renders the same objects");
} finally {
  rmSync(pkgDir, { recursive: true, force: true });
}
// Every value is in docs/deploy.md's table: a path named there in
// backticks covers what is below it; an undocumented leaf fails.
const docs = readFileSync(join(REPO_ROOT, "docs/deploy.md"), "utf8");
const helmDocs = docs.slice(docs.indexOf("\n## Helm\n"), docs.indexOf("\n## ", docs.indexOf("\n## Helm\n") + 1));
function documented(node, path) {
  if (path && helmDocs.includes(`\`${path}\``)) return check(true, path);
  if (node && typeof node === "object" && !Array.isArray(node) && Object.keys(node).length) {
    for (const [k, v] of Object.entries(node)) documented(v, path ? `${path}.${k}` : k);
  } else {
    check(false, `value ${path} is not in docs/deploy.md's Helm section`);
  }
}
documented(YAML.parse(readFileSync(join(CHART, "values.yaml"), "utf8")), "");

console.log(`${CASES.length} value sets rendered, ${REFUSED.length} refused`);
done("chart_unit");
