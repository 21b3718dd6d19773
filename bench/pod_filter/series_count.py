#!/usr/bin/env python3
"""Series per node with and without the pod filter (docs/metrics.md).

Builds a host tree with N pods from tests/fixtures/hosts/v2-systemd (its
three pods plus clones of its one-container nginx pod, T of them labelled as
Kubeflow training workers), runs the real agent on it with file discovery
for each --pod-filter, and counts the samples of one /metrics scrape.

  bench/pod_filter/series_count.py [--agent build/agent/trainscope-agent]
      [--pods 110] [--training 8 16 32]
"""
import argparse
import copy
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "tests/fixtures/hosts/v2-systemd")
BESTEFFORT = "sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice"
NGINX_UID = "3af0213a-4553-4fbf-b1a8-786cddd9f9ed"
NGINX_PIDS = ("1007", "1008")


def clone_pod(host, item, index, training):
    """Adds one copy of the nginx pod: cgroups, /proc entries, pods.json."""
    uid = "%08x-0000-4000-8000-%012x" % (index, index)
    old_slice = "kubepods-besteffort-pod%s.slice" % NGINX_UID.replace("-", "_")
    new_slice = "kubepods-besteffort-pod%s.slice" % uid.replace("-", "_")
    src = os.path.join(host, BESTEFFORT, old_slice)
    dst = os.path.join(host, BESTEFFORT, new_slice)
    shutil.copytree(src, dst, symlinks=True)
    pids = [str(100000 + 2 * index), str(100001 + 2 * index)]
    renames = {}
    for name in sorted(os.listdir(dst)):
        if name.startswith("cri-containerd-"):
            new_id = "%064x" % (index * 16 + len(renames) + 1)
            renames[name[len("cri-containerd-"):-len(".scope")]] = new_id
            os.rename(os.path.join(dst, name),
                      os.path.join(dst, "cri-containerd-%s.scope" % new_id))
    # cgroup.procs and /proc/<pid>/cgroup point at the new cgroups.
    for old_pid, new_pid in zip(NGINX_PIDS, pids):
        shutil.copytree(os.path.join(host, "proc", old_pid),
                        os.path.join(host, "proc", new_pid), symlinks=True)
        path = os.path.join(host, "proc", new_pid, "cgroup")
        text = open(path).read().replace(old_slice, new_slice)
        for old_id, new_id in renames.items():
            text = text.replace(old_id, new_id)
        open(path, "w").write(text)
    for root, _, files in os.walk(dst):
        if "cgroup.procs" in files:
            path = os.path.join(root, "cgroup.procs")
            text = open(path).read()
            for old_pid, new_pid in zip(NGINX_PIDS, pids):
                text = text.replace(old_pid, new_pid)
            open(path, "w").write(text)
    pod = copy.deepcopy(item)
    meta = pod["metadata"]
    meta["uid"] = uid
    if training:
        meta["namespace"] = "training"
        meta["name"] = "bench-worker-%d" % index
        meta["labels"] = {
            "training.kubeflow.org/job-name": "bench",
            "training.kubeflow.org/replica-type": "worker",
            "training.kubeflow.org/replica-index": str(index),
        }
    else:
        meta["name"] = "app-%d-7c5ddbdf54-x%d" % (index, index)
        meta["labels"] = {"app": "app-%d" % index}
    pod["status"]["podIP"] = "10.245.%d.%d" % (index // 200, index % 200 + 2)
    pod["status"]["podIPs"] = [{"ip": pod["status"]["podIP"]}]
    for status in pod["status"]["containerStatuses"]:
        old = status["containerID"].split("://", 1)[1]
        status["containerID"] = "containerd://" + renames.get(old, old)
    return pod


def build_host(workdir, pods, training):
    host = os.path.join(workdir, "host")
    shutil.copytree(FIXTURE, host, symlinks=True)
    doc = json.load(open(os.path.join(host, "pods.json")))
    nginx = next(i for i in doc["items"] if i["metadata"]["uid"] == NGINX_UID)
    have_training = sum(1 for i in doc["items"]
                        if i["metadata"]["namespace"] == "training")
    for index in range(len(doc["items"]), pods):
        wanted = training - have_training
        clone_training = wanted > 0
        have_training += clone_training
        doc["items"].append(clone_pod(host, nginx, index, clone_training))
    json.dump(doc, open(os.path.join(host, "pods.json"), "w"))
    return host


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(agent, host, extra):
    port = free_port()
    cmd = [agent, "--listen", "127.0.0.1:%d" % port, "--interval", "0.2",
           "--node-name", "node-a", "--discovery", "file",
           "--pod-file", os.path.join(host, "pods.json"),
           "--host-proc", os.path.join(host, "proc"),
           "--host-sys", os.path.join(host, "sys"),
           "--cgroup-root", os.path.join(host, "sys/fs/cgroup"),
           "--flows", "off", "--nvml-library", "/nonexistent"] + extra
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while True:
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port)
                break
            except Exception:
                if time.time() > deadline:
                    raise RuntimeError("agent not ready: %s" % cmd)
                time.sleep(0.2)
        time.sleep(0.5)  # a second cycle: counters have their rates' inputs
        body = urllib.request.urlopen(
            "http://127.0.0.1:%d/metrics" % port).read().decode()
    finally:
        proc.terminate()
        proc.wait(10)
    samples = [l for l in body.splitlines() if l and not l.startswith("#")]
    pod_level = [l for l in samples if l.startswith(
        ("trainscope_pod_", "trainscope_container_"))]
    return len(samples), len(pod_level), len(body.encode())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent",
                        default=os.path.join(ROOT, "build/agent/trainscope-agent"))
    parser.add_argument("--pods", type=int, default=110)
    parser.add_argument("--training", type=int, nargs="+", default=[8, 16, 32])
    args = parser.parse_args()
    print("| pods | training pods | --pod-filter | series | pod/container "
          "series | /metrics bytes |")
    print("|---:|---:|---|---:|---:|---:|")
    for training in args.training:
        with tempfile.TemporaryDirectory(prefix="trainscope-podfilter.") as w:
            host = build_host(w, args.pods, training)
            for mode in ("all", "training"):
                total, pod_level, size = scrape(
                    args.agent, host, ["--pod-filter", mode])
                print("| %d | %d | %s | %d | %d | %d |" %
                      (args.pods, training, mode, total, pod_level, size))


if __name__ == "__main__":
    main()
