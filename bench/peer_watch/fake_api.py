#!/usr/bin/env python3
"""A Kubernetes pod list/watch API on loopback for the peer-watch benchmark.

Serves `local` pods on node `--node` and `remote` training pods spread over
`--nodes` other nodes, each shaped like a Kubeflow TFJob pod (labels,
annotations, two containers with env and mounts, status conditions: about
5 KiB of JSON, the size of real pods). Honours fieldSelector
spec.nodeName=X, labelSelector terms `k`, `k=v`, `k in (a,b)` (comma = and),
limit/continue paging, and watch=true (held open with a bookmark, then a
steady trickle of MODIFIED events at --events-per-second). Stdlib only.
"""
import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

ROLE_KEY = "training.kubeflow.org/replica-type"


def make_pod(ns, name, node, ip, job, role, index, rv):
    env = [{"name": f"VAR_{i}", "value": f"value-{i}-" + "x" * 24} for i in range(12)]
    env.append({"name": "TF_CONFIG", "value": json.dumps(
        {"cluster": {"ps": [f"{job}-ps-{i}.{job}:2222" for i in range(4)]},
         "task": {"type": role, "index": index}})})
    container = {
        "name": "tensorflow", "image": "registry.example/train:2.21",
        "ports": [{"containerPort": 2222, "name": "tfjob-port"}],
        "env": env,
        "resources": {"limits": {"cpu": "4", "memory": "16Gi"},
                      "requests": {"cpu": "4", "memory": "16Gi"}},
        "volumeMounts": [{"name": f"vol-{i}", "mountPath": f"/mnt/vol-{i}"} for i in range(4)],
    }
    sidecar = {"name": "log-shipper", "image": "registry.example/fluent-bit:3",
               "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}}}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": ns,
            "uid": f"{abs(hash((ns, name))) % 10**8:08d}-0000-4000-8000-{index:012d}",
            "resourceVersion": str(rv),
            "labels": {"training.kubeflow.org/job-name": job,
                       ROLE_KEY: role,
                       "training.kubeflow.org/replica-index": str(index),
                       "training.kubeflow.org/operator-name": "tfjob-controller",
                       "app.kubernetes.io/part-of": "ml-platform"},
            "annotations": {"sidecar.istio.io/inject": "false",
                            "kubectl.kubernetes.io/last-applied-configuration": "{" + "a" * 400 + "}"},
            "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
                                 "name": job, "uid": "owner-uid", "controller": True}],
        },
        "spec": {"nodeName": node, "containers": [container, sidecar],
                 "volumes": [{"name": f"vol-{i}", "emptyDir": {}} for i in range(4)],
                 "restartPolicy": "Never", "schedulerName": "default-scheduler"},
        "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                   "hostIP": "10.0.0.1",
                   "conditions": [{"type": t, "status": "True",
                                   "lastTransitionTime": "2026-11-23T10:00:00Z"}
                                  for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
                   "containerStatuses": [
                       {"name": "tensorflow", "ready": True, "restartCount": 0,
                        "containerID": "containerd://" + "a" * 64,
                        "image": "registry.example/train:2.21"},
                       {"name": "log-shipper", "ready": True, "restartCount": 0,
                        "containerID": "containerd://" + "b" * 64,
                        "image": "registry.example/fluent-bit:3"}]},
    }


def term_matches(term, labels):
    term = term.strip()
    m = re.fullmatch(r"(\S+)\s+in\s+\(([^)]*)\)", term)
    if m:
        return labels.get(m.group(1)) in [v.strip() for v in m.group(2).split(",")]
    if "=" in term:
        k, v = term.split("=", 1)
        return labels.get(k) == v
    return term in labels


def split_terms(selector):
    out, depth, cur = [], 0, ""
    for c in selector:
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    if cur:
        out.append(cur)
    return out


class State:
    def __init__(self, args):
        self.pods = []
        self.rv = 1
        self.lock = threading.Lock()
        n = 0
        for i in range(args.local):
            self.pods.append(make_pod("training", f"local-worker-{i}", args.node,
                                      f"198.18.0.{10 + i % 240}", "local", "worker", i, 1))
        jobs = max(1, args.remote // 220)
        for j in range(jobs):
            size = args.remote // jobs
            for k in range(size):
                role, index = ("ps", k) if k < 20 else ("worker", k - 20)
                node = f"node-{(n % args.nodes) + 1:03d}"
                ip = f"198.{19 + (n >> 16)}.{(n >> 8) & 255}.{n & 255}"
                self.pods.append(make_pod(f"team-{j % 25}", f"job{j}-{role}-{index}", node, ip,
                                          f"job{j}", role, index, 1))
                n += 1

    def select(self, query):
        field = query.get("fieldSelector", [""])[0]
        labels = query.get("labelSelector", [""])[0]
        out = []
        for p in self.pods:
            if field.startswith("spec.nodeName=") and p["spec"]["nodeName"] != field.split("=", 1)[1]:
                continue
            if labels and not all(term_matches(t, p["metadata"]["labels"]) for t in split_terms(labels)):
                continue
            out.append(p)
        return out


def handler_for(state, args):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def send_json(self, obj):
            body = json.dumps(obj).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            state.bytes_sent = getattr(state, "bytes_sent", 0) + len(body)

        def do_GET(self):
            url = urlparse(self.path)
            q = parse_qs(url.query)
            if not url.path.endswith("/pods"):
                self.send_error(404)
                return
            pods = state.select(q)
            if q.get("watch", ["false"])[0] in ("true", "1"):
                return self.watch(pods)
            start = int(q.get("continue", ["0"])[0] or 0)
            limit = int(q.get("limit", ["0"])[0] or 0) or len(pods)
            page = pods[start:start + limit]
            meta = {"resourceVersion": str(state.rv)}
            if start + limit < len(pods):
                meta["continue"] = str(start + limit)
            self.send_json({"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": page})

        def watch(self, pods):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def chunk(obj):
                data = (json.dumps(obj) + "\n").encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            deadline = time.time() + args.watch_seconds
            i = 0
            try:
                while time.time() < deadline:
                    if pods and args.events_per_second > 0:
                        with state.lock:
                            state.rv += 1
                            p = dict(pods[i % len(pods)])
                            p["metadata"] = dict(p["metadata"], resourceVersion=str(state.rv))
                        chunk({"type": "MODIFIED", "object": p})
                        i += 1
                        time.sleep(1.0 / args.events_per_second)
                    else:
                        chunk({"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1",
                                                               "metadata": {"resourceVersion": str(state.rv)}}})
                        time.sleep(5)
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--node", default="bench-node")
    ap.add_argument("--local", type=int, default=110)
    ap.add_argument("--remote", type=int, default=20000)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--events-per-second", type=float, default=0)
    ap.add_argument("--watch-seconds", type=float, default=300)
    args = ap.parse_args()
    state = State(args)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler_for(state, args))
    server.daemon_threads = True
    print(f"fake_api: {len(state.pods)} pods on 127.0.0.1:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
