#!/usr/bin/env python3
"""Renders the Trainscope mixin (dashboards/mixin, jsonnet) into the files the
repository ships, with the real jsonnet (go-jsonnet, built pinned by
scripts/install-jsonnet.sh):
- dashboards/alerts.yaml, a plain Prometheus rules file,
- daemonset/base/prometheusrule.yaml, the Prometheus Operator's PrometheusRule,
- dashboards/*.json, the Grafana dashboards, and their copies for kustomize's
  configMapGenerator in daemonset/components/grafana-dashboards/.

  python3 dashboards/mixin/generate.py           # rewrite the shipped files
  python3 dashboards/mixin/generate.py --check   # exit 1 when one is stale
  python3 dashboards/mixin/generate.py --config mine.libsonnet --out DIR
      # your settings (a jsonnet object mixed in last, such as
      # { _config+:: { clusterLabel: 'k8s_cluster' } }): every file in DIR

Exit 2 when jsonnet is missing or the mixin does not evaluate.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

MIXIN = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(MIXIN))
# Where each rendered file goes in the repository.
SHIPPED = {
    "alerts.yaml": ["dashboards/alerts.yaml"],
    "prometheusrule.yaml": ["daemonset/base/prometheusrule.yaml"],
}
DASHBOARD_COPIES = ["dashboards", "daemonset/components/grafana-dashboards"]


def find_jsonnet():
    if os.environ.get("JSONNET"):
        return os.environ["JSONNET"]
    try:
        built = subprocess.run(
            ["bash", os.path.join(ROOT, "scripts/install-jsonnet.sh"), "--print"],
            capture_output=True, text=True, check=True).stdout.split()[0]
        if os.access(built, os.X_OK):
            return built
    except (subprocess.CalledProcessError, IndexError):
        pass
    return shutil.which("jsonnet")


def render(jsonnet, config):
    cmd = [jsonnet, "-J", MIXIN, os.path.join(MIXIN, "build.jsonnet")]
    if config:
        cmd += ["--tla-code-file", "overrides=" + os.path.abspath(config)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("generate: jsonnet failed:\n" + done.stderr)
    files = {}
    for name, value in json.loads(done.stdout).items():
        if isinstance(value, str):
            files[name] = value
        else:  # a dashboard
            files[name] = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    return files


def targets(name):
    if name in SHIPPED:
        return SHIPPED[name]
    return [os.path.join(d, name) for d in DASHBOARD_COPIES]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--config", help="a jsonnet file mixed into the mixin last")
    parser.add_argument("--out", help="write every file here instead")
    args = parser.parse_args()
    if bool(args.config) != bool(args.out):
        sys.exit("generate: --config and --out go together")
    jsonnet = find_jsonnet()
    if not jsonnet:
        print("generate: no jsonnet; run: bash scripts/install-jsonnet.sh", file=sys.stderr)
        return 2
    files = render(jsonnet, args.config)
    stale = 0
    for name, text in files.items():
        paths = [os.path.join(args.out, name)] if args.out else [
            os.path.join(ROOT, t) for t in targets(name)]
        for path in paths:
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
            if old == text:
                continue
            rel = os.path.relpath(path, args.out or ROOT)
            if args.check:
                print(f"generate: {rel} is out of date; run: python3 dashboards/mixin/generate.py",
                      file=sys.stderr)
                stale += 1
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                print(f"generate: wrote {rel}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
