#!/usr/bin/env python3
"""Synthetic cluster for the cluster-view benchmark, as OpenMetrics text.

Writes what Prometheus would hold after scraping N Trainscope agents every
--interval seconds for --minutes minutes: every series the cluster view
(`trainscope report --prometheus`) reads, with the labels the agent exports
plus the scrape's target labels (job="trainscope-agent", instance=<node>, and
the Prometheus Operator's endpoint/service and namespace/pod/container of the
agent pod where the agent's own series lack them: honor_labels keeps the
agent's namespace/pod).

The cluster: --nodes x --pods-per-node pods. About --training-fraction of the
pods belong to training jobs (sizes cycle through JOB_SIZES, the largest 200
workers + 20 PS); job 0 has a hot PS (ps-0 carries half of the job's PS
traffic); the rest are ordinary service pods. Pods are spread round-robin
over the nodes. --faults adds three more conditions the cluster view must
find (listed in the summary): a straggling worker in job 1 (30% of its
peers' exchange), node-001's NIC receiving at 90% of its speed, and a
throttled service pod that its node's agent reports
(trainscope_diagnosis_active, as the node view exports it). The straggler's
entry carries what it costs its job: job 1's workers are asynchronous, so
the job misses (1 - 0.3) of one worker's steps out of n workers' (0.7/n; info
below 5%, as for 16 or more workers).

Every value is a function of (seed, series, sample index), and the output is
written family by family and series by series, so memory stays flat whatever
the size. Peer counters agree from both ends: a worker's bytes received from
a PS are the PS's bytes transmitted to that worker, sample for sample.

Usage: generate.py [--nodes 500] [--pods-per-node 110] [--minutes 30]
                   [--interval 15] [--seed 1] [--end UNIX] [--out FILE]
A summary (series, samples, end time) goes to stderr as one JSON line.
"""

import argparse
import hashlib
import json
import math
import sys
import time

# (workers, ps) of training jobs, cycled until the training share is filled.
JOB_SIZES = [(200, 20), (100, 10), (64, 8), (32, 4), (50, 5), (16, 2),
             (8, 2), (24, 3), (4, 1), (12, 2)]
STRAGGLER_SPEED = 0.3  # --faults: job 1's worker 0, of its peers' pace
STEP_BYTES = 4_000_000  # variables pulled (and gradients pushed) per step
TEAMS = 20
SERVICE_NAMESPACES = 40
NIC_SPEED = 3_125_000_000  # 25 Gbit/s
AGENT_NS = "trainscope"


def unit(*key):
    """A deterministic number in [0, 1) for a key."""
    h = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2.0**64


class Pod:
    __slots__ = ("index", "namespace", "name", "job", "role", "replica",
                 "node", "labels", "cpu", "cpu_limit", "mem", "mem_limit",
                 "io", "gpu", "peers", "net_extra", "job_index")


class Cluster:
    """The layout: pods, jobs, placement, base rates. Small (one object per
    pod); the samples are computed while writing."""

    def __init__(self, args):
        self.args = args
        self.nodes = ["node-%03d" % i for i in range(args.nodes)]
        total = args.nodes * args.pods_per_node
        training_budget = int(total * args.training_fraction)
        self.pods = []
        self.jobs = []  # (index, namespace, name, workers, ps, shares)
        used = 0
        j = 0
        # Sizes in turn; one that no longer fits is skipped, so small
        # clusters still get jobs (the first one gets the hot PS).
        misses = 0
        k = 0
        while misses < len(JOB_SIZES):
            workers, ps = JOB_SIZES[k % len(JOB_SIZES)]
            k += 1
            if used + workers + ps > training_budget:
                misses += 1
                continue
            misses = 0
            self._add_job(j, workers, ps, args.faults)
            used += workers + ps
            j += 1
        i = 0
        while len(self.pods) < total:
            self._add_service_pod(i)
            i += 1
        for k, pod in enumerate(self.pods):
            pod.index = k
            pod.node = self.nodes[k % len(self.nodes)]
        self._node_rates()
        # (kind, pod or node[, cost to its job]) the cluster view must name
        self.faults = []
        self.throttled = None
        if args.faults:
            self._add_faults()
        # --shard I/N: only the series of nodes I, I+N, ... (their pods
        # included), so a big cluster can be imported in parts.
        self.pods_out = [p for p in self.pods
                         if p.index % args.nodes % args.shard_count ==
                         args.shard_index]
        self.nodes_out = [n for i, n in enumerate(self.nodes)
                          if i % args.shard_count == args.shard_index]

    def _labels(self, pod):
        return ('namespace="%s",pod="%s",training_job="%s",role="%s",'
                'replica_index="%s"' % (pod.namespace, pod.name, pod.job,
                                        pod.role, pod.replica))

    def _add_faults(self):
        stragglers = [p for p in self.pods
                      if p.job_index == 1 and p.role == "worker"
                      and p.replica == 0]
        if stragglers:
            workers = next(w for j, _, _, w, _, _ in self.jobs if j == 1)
            self.faults.append(("straggler_worker", stragglers[0].name,
                                (1 - STRAGGLER_SPEED) / workers))
        if len(self.nodes) > 1:
            self.node_rate[self.nodes[1]][0] = 0.9 * NIC_SPEED
            self.faults.append(("network_saturated", self.nodes[1]))
        for pod in self.pods:
            if pod.job_index < 0 and pod.cpu_limit is not None:
                self.throttled = pod
                self.faults.append(("cpu_throttled", pod.name))
                break

    def _add_job(self, j, workers, ps, faults):
        ns = "team-%02d" % (j % TEAMS)
        name = "job-%03d" % j
        if j == 0:  # the hot PS: one big embedding on ps-0
            shares = [0.5] + [0.5 / (ps - 1)] * (ps - 1) if ps > 1 else [1.0]
        else:
            raw = [1.0 + 0.1 * (unit(self.args.seed, name, p) - 0.5)
                   for p in range(ps)]
            shares = [r / sum(raw) for r in raw]
        # Steps per second per worker; --faults slows job 1's worker 0.
        speed = [STRAGGLER_SPEED if faults and j == 1 and w == 0 else 1.0
                 for w in range(workers)]
        self.jobs.append((j, ns, name, workers, ps, shares))
        gpu_job = j % 3 == 0
        for role, count in (("ps", ps), ("worker", workers)):
            for r in range(count):
                pod = Pod()
                pod.namespace, pod.job, pod.role, pod.replica = ns, name, role, r
                pod.name = "%s-%s-%d" % (name, role, r)
                pod.job_index = j
                pod.labels = self._labels(pod)
                pod.peers = []
                if role == "worker":
                    for p in range(ps):
                        rate = STEP_BYTES * shares[p] * speed[r]
                        pod.peers.append(("%s-ps-%d" % (name, p), "ps",
                                          (name, r, p), rate, rate))
                    pod.cpu, pod.cpu_limit = 1.5, 2.0
                    pod.gpu = gpu_job
                else:
                    for w in range(workers):
                        rate = STEP_BYTES * shares[r] * speed[w]
                        # rx (gradients) = worker tx; tx (variables) = worker rx
                        pod.peers.append(("%s-worker-%d" % (name, w), "worker",
                                          (name, w, r), rate, rate))
                    load = shares[r] * ps  # 1 when balanced
                    pod.cpu, pod.cpu_limit = min(3.6, 1.0 * load), 4.0
                    pod.gpu = False
                pod.mem, pod.mem_limit = 6e9, 16e9
                pod.io = 20e6 if role == "worker" else 1e5
                pod.net_extra = 2e4
                self.pods.append(pod)

    def _add_service_pod(self, i):
        pod = Pod()
        pod.namespace = "svc-%02d" % (i % SERVICE_NAMESPACES)
        pod.job, pod.role, pod.replica = "", "", ""
        pod.name = "app-%05d-%s" % (i // 3, hashlib.blake2b(
            b"%d" % i, digest_size=4).hexdigest()[:5])
        pod.job_index = -1
        pod.labels = self._labels(pod)
        pod.peers = []
        u = unit(self.args.seed, "svc", i)
        pod.cpu = 0.02 + 0.3 * u
        pod.cpu_limit = 0.5 if u < 0.8 else None
        pod.mem, pod.mem_limit = 1e8 + 4e8 * u, 1e9
        pod.io, pod.net_extra, pod.gpu = 1e4 * u, 1e5 * u, False
        self.pods.append(pod)

    def pod_net(self, pod):
        """Base (rx, tx) bytes/s of the pod's interface."""
        rx = sum(p[3] for p in pod.peers) + pod.net_extra
        tx = sum(p[4] for p in pod.peers) + pod.net_extra
        return rx, tx

    def _node_rates(self):
        # Most peers are on other nodes: ~90% of pod bytes cross the NIC.
        self.node_rate = {n: [0.0, 0.0] for n in self.nodes}
        for pod in self.pods:
            rx, tx = self.pod_net(pod)
            self.node_rate[pod.node][0] += 0.9 * rx
            self.node_rate[pod.node][1] += 0.9 * tx


class Writer:
    """Streams families; counts series and samples."""

    def __init__(self, out, args):
        self.out = out
        self.series = 0
        self.samples = 0
        n = int(args.minutes * 60 // args.interval)
        self.times = [args.end - (n - 1 - k) * args.interval for k in range(n)]
        self.ts = ["%d" % t for t in self.times]
        self.interval = args.interval

    def family(self, name, kind):
        self.out.write("# TYPE %s %s\n" % (name, kind))

    def series_of(self, metric, labels, values):
        prefix = "%s{%s} " % (metric, labels)
        self.out.write("".join("%s%s %s\n" % (prefix, v, t)
                               for v, t in zip(values, self.ts)))
        self.series += 1
        self.samples += len(self.ts)

    def counter(self, rate, key, digits=0):
        """A counter growing at rate*(1 +- 10%), jitter fixed by key."""
        phase = unit(*key) * 6.283
        start = rate * 3600 * (1 + unit("start", *key))
        out = []
        v = start
        for k in range(len(self.ts)):
            out.append(("%.*f" % (digits, v)) if digits else "%d" % v)
            v += rate * self.interval * (1 + 0.1 * math.sin(0.3 * k + phase))
        return out

    def gauge(self, level, key, spread=0.05):
        phase = unit(*key) * 6.283
        return ["%.6g" % (level * (1 + spread * math.sin(0.2 * k + phase)))
                for k in range(len(self.ts))]


def target(node, pod_series=True):
    t = 'job="trainscope-agent",instance="%s",endpoint="metrics",' \
        'service="trainscope-agent",container="agent"' % node
    if not pod_series:  # node series: the agent pod's namespace/pod
        t += ',namespace="%s",pod="trainscope-agent-%s"' % (AGENT_NS,
                                                           node[-3:])
    return t


def write_all(cluster, w, args):
    pods = cluster.pods_out
    seed = args.seed

    def each_pod(metric, fn, filt=lambda p: True, extra=""):
        for pod in pods:
            if filt(pod):
                w.series_of(metric, target(pod.node) + "," + pod.labels + extra,
                            fn(pod))

    w.family("trainscope_pod_cpu_usage_seconds", "counter")
    each_pod("trainscope_pod_cpu_usage_seconds_total",
             lambda p: w.counter(p.cpu, (seed, p.name, "cpu"), 3))
    lim = lambda p: p.cpu_limit is not None
    w.family("trainscope_pod_cpu_periods", "counter")
    each_pod("trainscope_pod_cpu_periods_total",
             lambda p: w.counter(10, (seed, p.name, "per")), lim)
    w.family("trainscope_pod_cpu_throttled_periods", "counter")
    each_pod("trainscope_pod_cpu_throttled_periods_total",
             lambda p: w.counter(4 if p is cluster.throttled else 0.1,
                                 (seed, p.name, "thr")), lim)
    w.family("trainscope_pod_cpu_limit_cores", "gauge")
    each_pod("trainscope_pod_cpu_limit_cores",
             lambda p: w.gauge(p.cpu_limit, (), 0), lim)
    w.family("trainscope_pod_memory_working_set_bytes", "gauge")
    each_pod("trainscope_pod_memory_working_set_bytes",
             lambda p: w.gauge(p.mem, (seed, p.name, "ws")))
    w.family("trainscope_pod_memory_limit_bytes", "gauge")
    each_pod("trainscope_pod_memory_limit_bytes",
             lambda p: w.gauge(p.mem_limit, (), 0))
    w.family("trainscope_pod_oom_events", "counter")
    each_pod("trainscope_pod_oom_events_total",
             lambda p: w.counter(0, (seed, p.name, "oom")))
    w.family("trainscope_pod_io_read_bytes", "counter")
    each_pod("trainscope_pod_io_read_bytes_total",
             lambda p: w.counter(p.io, (seed, p.name, "io")))
    w.family("trainscope_pod_pressure_waiting_seconds", "counter")
    for res, share in (("cpu", 0.05), ("memory", 0.001), ("io", 0.02)):
        each_pod("trainscope_pod_pressure_waiting_seconds_total",
                 lambda p: w.counter(share, (seed, p.name, res), 3),
                 extra=',resource="%s"' % res)
    for d, i in (("receive", 0), ("transmit", 1)):
        w.family("trainscope_pod_network_%s_bytes" % d, "counter")
        each_pod("trainscope_pod_network_%s_bytes_total" % d,
                 lambda p: w.counter(cluster.pod_net(p)[i],
                                     (seed, p.name, "net", d)))
    w.family("trainscope_pod_info", "gauge")
    for pod in pods:
        k = pod.index
        info = ',node="%s",pod_ip="10.%d.%d.%d",uid="%s",host_network="false"' \
            % (pod.node, 64 + k // 65536, (k // 256) % 256, k % 256,
               hashlib.blake2b(pod.name.encode(), digest_size=16).hexdigest())
        w.series_of("trainscope_pod_info",
                    target(pod.node) + "," + pod.labels + info,
                    ["1"] * len(w.ts))
    for d, i in (("receive", 3), ("transmit", 4)):
        w.family("trainscope_peer_%s_bytes" % d, "counter")
        metric = "trainscope_peer_%s_bytes_total" % d
        for pod in pods:
            base = target(pod.node) + "," + pod.labels
            for peer, role, pair, rx, tx in pod.peers:
                # The pair key and the direction of the bytes (variables:
                # PS -> worker, gradients: worker -> PS) fix the samples, so
                # both ends write the same numbers.
                rate = (rx, tx)[i - 3]
                to_worker = (pod.role == "worker") == (d == "receive")
                w.series_of(metric, base + ',peer_namespace="%s",peer_pod="%s",'
                            'peer_role="%s"' % (pod.namespace, peer, role),
                            w.counter(rate, (seed, "pair", pair, to_worker)))
            # Everything else (DNS, storage, services): one unknown peer.
            w.series_of(metric, base + ',peer_namespace="",peer_pod="",'
                        'peer_role=""',
                        w.counter(pod.net_extra, (seed, pod.name, "unk", d)))
    w.family("trainscope_pod_gpu_utilization_ratio", "gauge")
    for pod in pods:
        if pod.gpu:
            uuid = hashlib.blake2b(pod.name.encode(), digest_size=8).hexdigest()
            w.series_of("trainscope_pod_gpu_utilization_ratio",
                        target(pod.node).replace('container="agent"',
                                                 'container="tensorflow"') +
                        "," + pod.labels + ',gpu="%d",UUID="GPU-%s",'
                        'modelName="NVIDIA A100-SXM4-80GB"' %
                        (pod.replica % 8, uuid),
                        w.gauge(0.7, (seed, pod.name, "gpu"), 0.2))
    # The throttled pod's node view says so, as the agent exports it.
    w.family("trainscope_diagnosis_active", "gauge")
    if cluster.throttled is not None and cluster.throttled in pods:
        p = cluster.throttled
        w.series_of("trainscope_diagnosis_active",
                    target(p.node) + ',kind="cpu_throttled",'
                    'severity="warning",namespace="%s",training_job="",'
                    'pod="%s",node="%s"' % (p.namespace, p.name, p.node),
                    ["1"] * len(w.ts))
    # Node series carry no pod labels (the agent pod's, from the target).
    w.family("trainscope_node_cpu_count", "gauge")
    for node in cluster.nodes_out:
        w.series_of("trainscope_node_cpu_count",
                    target(node, False) + ',node="%s"' % node,
                    ["64"] * len(w.ts))
    w.family("trainscope_node_network_speed_bytes", "gauge")
    for node in cluster.nodes_out:
        w.series_of("trainscope_node_network_speed_bytes",
                    target(node, False) + ',node="%s",device="eth0"' % node,
                    ["%d" % NIC_SPEED] * len(w.ts))
    for d, i in (("receive", 0), ("transmit", 1)):
        w.family("trainscope_node_network_%s_bytes" % d, "counter")
        for node in cluster.nodes_out:
            w.series_of("trainscope_node_network_%s_bytes_total" % d,
                        target(node, False) + ',node="%s",device="eth0"' % node,
                        w.counter(cluster.node_rate[node][i],
                                  (seed, node, d)))
    w.out.write("# EOF\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods-per-node", type=int, default=110)
    ap.add_argument("--training-fraction", type=float, default=0.4)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--interval", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--end", type=int, default=0,
                    help="last sample time (Unix seconds); default: the "
                    "start of the current 2-hour block plus --minutes, so "
                    "the samples fit one TSDB block (a single import pass)")
    ap.add_argument("--shard", default="0/1",
                    help="I/N: write only nodes I, I+N, I+2N, ... (and their "
                    "pods); the N parts together are the whole cluster")
    ap.add_argument("--faults", action="store_true",
                    help="add a straggler, a full node NIC and a throttled "
                    "pod (see above)")
    ap.add_argument("--summary-only", action="store_true",
                    help="print the summary of the whole cluster, write "
                    "no samples")
    ap.add_argument("--out", default="-")
    args = ap.parse_args()
    try:
        args.shard_index, args.shard_count = map(int, args.shard.split("/"))
        assert 0 <= args.shard_index < args.shard_count
    except (ValueError, AssertionError):
        ap.error("--shard must be I/N with 0 <= I < N, not " + args.shard)
    if args.nodes < 1 or args.pods_per_node < 1 or args.minutes <= 0:
        ap.error("--nodes, --pods-per-node and --minutes must be positive")
    if not args.end:
        block = 7200
        start = (int(time.time()) - int(args.minutes * 60)) // block * block
        args.end = start + int(args.minutes * 60) - args.interval
    started = time.time()
    cluster = Cluster(args)
    out = sys.stdout if args.out == "-" else open(args.out, "w",
                                                  buffering=1 << 20)
    w = Writer(out, args)
    if args.summary_only:
        per_pod = 16  # 14 pod series + 2 unknown-peer series
        w.series = (len(cluster.pods) * per_pod - sum(
            p.cpu_limit is None for p in cluster.pods) * 3 + sum(
            p.gpu for p in cluster.pods) + sum(
            len(p.peers) for p in cluster.pods) * 2 + len(cluster.nodes) * 4)
        w.samples = w.series * len(w.ts)
    else:
        write_all(cluster, w, args)
    out.flush()
    if out is not sys.stdout:
        out.close()
    biggest = max(cluster.jobs, key=lambda j: j[3] + j[4]) if cluster.jobs \
        else None
    print(json.dumps({
        "nodes": args.nodes, "pods": len(cluster.pods),
        "training_jobs": len(cluster.jobs),
        "training_pods": sum(j[3] + j[4] for j in cluster.jobs),
        "peer_series": sum(len(p.peers) for p in cluster.pods) * 2,
        "largest_job": {"namespace": biggest[1], "name": biggest[2],
                        "workers": biggest[3], "ps": biggest[4]}
        if biggest else None,
        "faults": cluster.faults,
        "shard": args.shard, "series": w.series, "samples": w.samples,
        "start": w.times[0], "end": w.times[-1], "interval": args.interval,
        "seconds": round(time.time() - started, 1)}), file=sys.stderr)


if __name__ == "__main__":
    main()
