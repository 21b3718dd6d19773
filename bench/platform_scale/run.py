#!/usr/bin/env python3
"""The agent's discovery at cluster scale against the real API server.

A real kube-apiserver and etcd (scripts/platform.sh) hold PODS training pods
(Kubeflow TFJob labels) bound to NODES nodes; the agent runs as node-000
with the peer-pod watch on (the default, `--peer-pods-selector auto`) and,
for comparison, off. Prints a table (docs/performance.md, docs/platform.md):

- how long creating the pods took (a parallel client on the pods API);
- the agent's first list: time until its pod table and its peer table are
  complete, its RSS and peak RSS after a steady period;
- the API server's requests on pods during the agent's run, by verb
  (kube-apiserver's own apiserver_request_total);
- a pod deleted and recreated under the same name: on this node (time until
  the agent holds the new UID) and on another node (time until the peer
  table is whole again);
- kube-apiserver stopped and started again: time until every watch of the
  agent has listed again, and the requests that cost.

    bench/platform_scale/run.py [--agent BIN] [--pods 5000] [--nodes 100]
        [--steady 30] [--settle 65] [--workers 16] [--create parallel|kubectl]
        [--json FILE]

Needs the platform's tools (scripts/install-platform.sh) and kubectl.
Loopback only.
"""
import argparse
import concurrent.futures
import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
HOST = os.path.join(REPO, "tests/fixtures/hosts/v2-systemd")
NAMESPACE = "training"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Platform:
    """scripts/platform.sh up/down, and the admin's view of the API."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="trainscope-scale-")
        self._script = os.path.join(REPO, "scripts/platform.sh")
        subprocess.run(["bash", self._script, "up", "--dir", self.dir], check=True,
                       stdout=subprocess.DEVNULL)
        env = dict(line.strip().split("=", 1)
                   for line in open(os.path.join(self.dir, "env")) if "=" in line)
        self.url = env["APISERVER_URL"]
        self.ca = env["CA_FILE"]
        self.token = open(env["ADMIN_TOKEN_FILE"]).read().strip()
        self.host, self.port = self.url.removeprefix("https://").split(":")
        self.ssl = ssl.create_default_context(cafile=self.ca)

    def down(self):
        subprocess.run(["bash", self._script, "down", "--dir", self.dir])

    def stop_apiserver(self):
        subprocess.run(["bash", self._script, "stop-apiserver", "--dir", self.dir], check=True)

    def start_apiserver(self):
        subprocess.run(["bash", self._script, "start-apiserver", "--dir", self.dir], check=True)

    def connection(self):
        return http.client.HTTPSConnection(self.host, int(self.port), context=self.ssl,
                                           timeout=30)

    def request(self, method, path, body=None, conn=None):
        own = conn is None
        conn = conn or self.connection()
        headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        if own:
            conn.close()
        if resp.status >= 300:
            raise RuntimeError(f"{method} {path}: HTTP {resp.status}: {data[:300]!r}")
        return data

    def kubectl(self, *args):
        return subprocess.run(["kubectl", "--kubeconfig", os.path.join(self.dir, "kubeconfig"),
                               *args], check=True, capture_output=True, text=True).stdout

    def pod_requests_by_verb(self, metric="apiserver_request_total", by_code=False):
        """A kube-apiserver counter for pods, summed by verb. Watches are
        counted in apiserver_request_total when they end; those open now
        are apiserver_longrunning_requests."""
        text = self.request("GET", "/metrics").decode()
        out = {}
        for line in text.splitlines():
            if not line.startswith(metric + "{") or 'resource="pods"' not in line:
                continue
            if 'subresource=""' not in line and "subresource=" in line:
                continue
            verb = re.search(r'verb="([A-Z]+)"', line).group(1)
            if by_code:
                verb += " " + re.search(r'code="([0-9]+)"', line).group(1)
            out[verb] = out.get(verb, 0) + float(line.rsplit(" ", 1)[1])
        return out


def pod(name, node, role, index):
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {
            "training.kubeflow.org/job-name": name.rsplit("-", 2)[0],
            "training.kubeflow.org/replica-type": role,
            "training.kubeflow.org/replica-index": str(index),
            "training.kubeflow.org/operator-name": "tfjob-controller"}},
        "spec": {"nodeName": node, "containers": [{
            "name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0",
            "ports": [{"containerPort": 2222, "name": "tfjob-port"}],
            "resources": {"limits": {"cpu": "4", "memory": "8Gi"}}}]},
    }


def cluster_pods(pods, nodes):
    """Jobs of 2 PS and 48 workers, spread over the nodes round-robin."""
    out = []
    for i in range(pods):
        job, k = divmod(i, 50)
        role, index = ("ps", k) if k < 2 else ("worker", k - 2)
        out.append(pod(f"job{job:03d}-{role}-{index}", f"node-{i % nodes:03d}", role, index))
    return out


def create_all(platform, items, workers):
    path = f"/api/v1/namespaces/{NAMESPACE}/pods"
    chunks = [items[i::workers] for i in range(workers)]

    def run(chunk):
        conn = platform.connection()
        for p in chunk:
            platform.request("POST", path, json.dumps(p), conn)
        conn.close()

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(run, chunks))


class Agent:
    def __init__(self, binary, platform, peer_selector, workdir):
        self.port = free_port()
        self.log = os.path.join(workdir, f"agent-{peer_selector}.log")
        self.proc = subprocess.Popen([
            binary, "--listen", f"127.0.0.1:{self.port}", "--node-name", "node-000",
            "--discovery", "apiserver", "--kube-api", platform.url,
            "--kube-token-file", os.path.join(platform.dir, "admin.token"),
            "--kube-ca-file", platform.ca, "--peer-pods-selector", peer_selector,
            "--flows", "off", "--profiler", "off", "--interval", "5",
            "--host-proc", f"{HOST}/proc", "--host-sys", f"{HOST}/sys",
            "--cgroup-root", f"{HOST}/sys/fs/cgroup",
            "--nvml-library", "/nonexistent/libnvidia-ml.so.1"],
            stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))

    def get(self, path):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as r:
                return r.read().decode()
        except OSError:
            return None

    def metric(self, name):
        text = self.get("/metrics") or ""
        m = re.search(r"^" + re.escape(name) + r"(\{[^}]*\})? (\S+)$", text, re.M)
        return float(m.group(2)) if m else None

    def pods(self):
        text = self.get("/api/v1/pods")
        return {p["name"]: p.get("uid", "") for p in json.loads(text)["pods"]} if text else {}

    def status_kib(self, field):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1])
        return 0

    def log_count(self, text):
        return open(self.log).read().count(text)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def wait_for(cond, timeout, what):
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if cond():
            return time.monotonic() - start
        time.sleep(0.05)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


def delta(after, before):
    return {v: int(after.get(v, 0) - before.get(v, 0)) for v in sorted(after)
            if after.get(v, 0) != before.get(v, 0)}


def run_agent(args, platform, selector, items, workdir, rows):
    local = sum(1 for p in items if p["spec"]["nodeName"] == "node-000")
    before = platform.pod_requests_by_verb()
    # The API server holds a watch on pods of its own.
    watches_before = platform.pod_requests_by_verb("apiserver_longrunning_requests")
    agent = Agent(args.agent, platform, selector, workdir)
    t_list = wait_for(lambda: len(agent.pods()) == local, 120, "the node's pods")
    row = {"selector": selector, "node pods": local, "node list s": round(t_list, 2)}
    if selector != "off":
        t_peers = wait_for(lambda: agent.metric("trainscope_discovery_peer_pods") == len(items),
                           300, "the peer table")
        row["peer pods"] = len(items)
        row["peer list s"] = round(t_peers, 2)
    time.sleep(args.steady)
    row["RSS MiB"] = round(agent.status_kib("VmRSS") / 1024, 1)
    row["peak MiB"] = round(agent.status_kib("VmHWM") / 1024, 1)
    row["requests"] = delta(platform.pod_requests_by_verb(), before)
    row["watches open"] = int(
        platform.pod_requests_by_verb("apiserver_longrunning_requests").get("WATCH", 0) -
        watches_before.get("WATCH", 0))
    if selector != "off":
        row.update(recreate(platform, agent, items))
        row.update(restart(platform, agent, items))
        row["RSS MiB relisted"] = round(agent.status_kib("VmRSS") / 1024, 1)
        row["peak MiB relisted"] = round(agent.status_kib("VmHWM") / 1024, 1)
        # The agent hands freed heap back to the kernel once a minute
        # (agent/main.cc): what the relist left behind, after that.
        time.sleep(args.settle)
        row["RSS MiB settled"] = round(agent.status_kib("VmRSS") / 1024, 1)
    agent.stop()
    rows.append(row)


def recreate(platform, agent, items):
    """A pod of this node and one of another, deleted and recreated."""
    out = {}
    for p in (next(p for p in items if p["spec"]["nodeName"] == "node-000"),
              next(p for p in items if p["spec"]["nodeName"] == "node-001")):
        name = p["metadata"]["name"]
        path = f"/api/v1/namespaces/{NAMESPACE}/pods/{name}"
        old = json.loads(platform.request("GET", path))["metadata"]["uid"]
        start = time.monotonic()
        platform.request("DELETE", path, json.dumps({"gracePeriodSeconds": 0}))
        new = json.loads(platform.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods",
                                          json.dumps(p)))["metadata"]["uid"]
        assert new != old
        if p["spec"]["nodeName"] == "node-000":
            wait_for(lambda: agent.pods().get(name) == new, 30, "the recreated local pod")
            out["recreate local s"] = round(time.monotonic() - start, 2)
        else:
            wait_for(lambda: agent.metric("trainscope_discovery_peer_pods") == len(items), 30,
                     "the peer table after the recreate")
            out["recreate peer s"] = round(time.monotonic() - start, 2)
    return out


def restart(platform, agent, items):
    """kube-apiserver stopped and started: every watch lists again."""
    relisted = agent.log_count("list works again")
    start = time.monotonic()
    platform.stop_apiserver()
    stopped = time.monotonic() - start
    platform.start_apiserver()
    back = time.monotonic() - start
    # One line per source once it lists again: the node watch and every
    # peer watch (`auto`: one per role label key).
    watches = 1 + len(re.findall(r"watching peer pods", open(agent.log).read()))
    wait_for(lambda: agent.log_count("list works again") >= relisted + watches, 120,
             "every watch to list again")
    return {"stop s": round(stopped, 2), "ready again s": round(back, 2),
            "relisted after s": round(time.monotonic() - start, 2),
            "requests after restart": platform.pod_requests_by_verb(by_code=True)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agent", default=os.path.join(REPO, "build/agent/trainscope-agent"))
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--steady", type=int, default=30, help="seconds before RSS is read")
    ap.add_argument("--settle", type=int, default=65,
                    help="seconds after the relist before RSS is read again")
    ap.add_argument("--workers", type=int, default=16, help="parallel creators")
    ap.add_argument("--create", choices=["parallel", "kubectl"], default="parallel",
                    help="how the pods are made: POSTs from --workers threads, or kubectl")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if not shutil.which("kubectl"):
        sys.exit("bench/platform_scale: needs kubectl")
    workdir = tempfile.mkdtemp(prefix="trainscope-scale-work-")
    platform = Platform()
    try:
        platform.kubectl("create", "namespace", NAMESPACE)
        items = cluster_pods(args.pods, args.nodes)
        start = time.monotonic()
        if args.create == "kubectl":
            manifest = os.path.join(workdir, "pods.json")
            with open(manifest, "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
            platform.kubectl("create", "-f", manifest)
            how = "one kubectl create -f of a List"
        else:
            create_all(platform, items, args.workers)
            how = f"{args.workers} parallel clients"
        created = time.monotonic() - start
        rows = []
        for selector in ("off", "auto"):
            run_agent(args, platform, selector, items, workdir, rows)
    finally:
        platform.down()
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"{args.pods} pods on {args.nodes} nodes created in {created:.1f} s "
          f"({args.pods / created:.0f} pods/s, {how})")
    keys = ["selector", "node pods", "peer pods", "node list s", "peer list s", "RSS MiB",
            "peak MiB", "watches open", "recreate local s", "recreate peer s", "stop s",
            "ready again s", "relisted after s", "RSS MiB relisted", "peak MiB relisted",
            "RSS MiB settled"]
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row.get(k, "")) for k in keys) + " |")
    for row in rows:
        print(f"API server requests on pods during the agent's run (selector {row['selector']}): "
              f"{row['requests']}")
        if "requests after restart" in row:
            print(f"  after the restart (the new server's counters, by code): "
                  f"{ {k: int(v) for k, v in row['requests after restart'].items()} }")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pods": args.pods, "nodes": args.nodes, "create_s": created,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
