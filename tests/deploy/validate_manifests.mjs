// Every object kubectl kustomize renders (base and overlays) validates
// offline against the Kubernetes OpenAPI schemas (kubernetes-models) and,
// for ServiceMonitor and PrometheusRule, against the Prometheus Operator CRD
// schemas (@kubernetes-models/prometheus-operator). An object of a kind
// without a schema fails the test.
import { existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { render, VARIANTS, check, done } from "./render.mjs";

const here = dirname(fileURLToPath(import.meta.url));
function modulePath(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  if (group === "monitoring.coreos.com") {
    return `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}.js`;
  }
  return `kubernetes-models/${group ? group + "/" : ""}${version}/${kind}.js`;
}

let validated = 0;
for (const variant of VARIANTS) {
  let objects;
  try {
    objects = render(variant);
  } catch (e) {
    check(false, e.message);
    continue;
  }
  check(objects.length > 0, `${variant}: renders no objects`);
  for (const obj of objects) {
    const where = `${variant}: ${obj.kind}/${obj.metadata?.name}`;
    const mod = modulePath(obj.apiVersion, obj.kind);
    if (!existsSync(join(here, "node_modules", mod))) {
      check(false, `${where}: no schema for ${obj.apiVersion} ${obj.kind} (${mod})`);
      continue;
    }
    const Model = (await import(mod.replace(/\.js$/, "")))[obj.kind];
    try {
      new Model(obj).validate();
      check(true, where);
      validated++;
    } catch (e) {
      check(false, `${where}: ${e.message}`);
    }
  }
}
console.log(`validated ${validated} objects`);
done("validate_manifests");
