#!/usr/bin/env python3
"""Writes the hand-made seeds of tests/fuzz/corpus (the fixture trees seed
the rest, see CMakeLists.txt). Run it again after changing it; the output is
committed so the build needs no generator. Crash regressions (crash-*) in the
corpus folders are kept as they are."""

import json
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"


def write(target, name, data):
    folder = ROOT / target
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (folder / name).write_bytes(data)


def pod(name, labels=None, env=None, uid=None):
    container = {"name": "main", "image": "tensorflow/tensorflow:2.15.0"}
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "training",
                     "uid": uid or "uid-" + name, "labels": labels or {},
                     "annotations": {"kubernetes.io/ingress-bandwidth": "10M"},
                     "resourceVersion": "7"},
        "spec": {"nodeName": "node-a", "containers": [container]},
        "status": {"phase": "Running", "podIP": "198.18.0.10",
                   "podIPs": [{"ip": "198.18.0.10"}],
                   "containerStatuses": [{"name": "main",
                                          "containerID": "containerd://abc"}]},
    }


def watch_events():
    tf_config = json.dumps({"cluster": {"ps": ["ctr-ps-0.ctr:2222"],
                                        "worker": ["ctr-worker-0.ctr:2222"]},
                            "task": {"type": "worker", "index": 0}})
    lines = [
        {"type": "ADDED", "object": pod("ctr-worker-0",
                                        env={"TF_CONFIG": tf_config})},
        {"type": "MODIFIED", "object": pod("ctr-ps-0",
                                           {"job-name": "ctr",
                                            "replica-type": "ps",
                                            "replica-index": "0"})},
        {"type": "DELETED", "object": pod("ctr-ps-0")},
        {"type": "BOOKMARK", "object": {"kind": "Pod", "metadata":
                                        {"resourceVersion": "12"}}},
        {"type": "ERROR", "object": {"kind": "Status", "code": 410,
                                     "message": "too old resource version"}},
    ]
    stream = "".join(json.dumps(line) + "\n" for line in lines)
    # The first byte is the chunk size the stream arrives in.
    write("watch_event", "events", bytes([0x40]) + stream.encode())
    write("watch_event", "split-lines", bytes([0x02]) + stream.encode())


def tf_configs():
    cfg = {"cluster": {"chief": ["ctr-chief-0.ctr:2222"],
                       "ps": ["ctr-ps-0.ctr:2222", "ctr-ps-1.ctr:2222"],
                       "worker": ["ctr-worker-0.ctr:2222"]},
           "task": {"type": "ps", "index": 1}}
    write("tf_config", "tf2-ps", "ctr-ps-1\n" + json.dumps(cfg))
    write("tf_config", "tf1-master",
          "job-master-0-x7k2p\n" + json.dumps(
              {"cluster": {"master": ["job-master-0:2222"]},
               "task": {"type": "master", "index": 0}, "environment": "cloud"}))
    write("tf_config", "mx-scheduler",
          "mx-scheduler-0\n" + json.dumps(
              {"cluster": {"scheduler": [{"url": "mx-scheduler-0",
                                          "port": 9091}]},
               "labels": {"scheduler": ""},
               "task": {"type": "scheduler", "index": 0}}))
    write("tf_config", "role-labels",
          "api-server-0\njob-name,replica-type,replica-index;,role,")


def quantities():
    for i, text in enumerate(["500m", "1.5", "512Mi", "1G", "1e9", " 10M ",
                              "1Gi", "0.1Ki", "+2.5e-3k", "100n", "1E"]):
        write("quantity", f"q{i}", text)


def small_files():
    write("cgroup_files", "cpu.max", "max 100000\n")
    write("cgroup_files", "cfs-quota-period", "12000\n100000\n")
    write("net_dev", "dev",
          "Inter-|   Receive                                                |"
          "  Transmit\n face |bytes    packets errs drop fifo frame "
          "compressed multicast|bytes    packets errs drop fifo colls "
          "carrier compressed\n"
          "    lo:  1000 10 0 0 0 0 0 0  1000 10 0 0 0 0 0 0\n"
          "  eth0: 98765432 70000 0 0 0 0 0 0 12345678 50000 0 0 0 0 0 0\n")
    write("pod_list", "empty-page.json", json.dumps(
        {"apiVersion": "v1", "kind": "PodList",
         "metadata": {"resourceVersion": "5", "continue": "abc"},
         "items": []}))


def proc_maps():
    write("proc_files", "maps",
          "55d0c0a00000-55d0c0a21000 r--p 00000000 fd:01 1311 /usr/bin/python3.11\n"
          "55d0c0a21000-55d0c0d2d000 r-xp 00021000 fd:01 1311 /usr/bin/python3.11\n"
          "7f2a1c000000-7f2a1c021000 rw-p 00000000 00:00 0 \n"
          "7f2a1d200000-7f2a1d226000 r-xp 00028000 fd:01 2044 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
          "7f2a1d400000-7f2a1d401000 r-xp 00000000 00:01 99 /memfd:jit (deleted)\n"
          "7ffd5a3f2000-7ffd5a3f4000 r-xp 00000000 00:00 0 [vdso]\n")
    write("proc_files", "speed", "25000\n")


def frames():
    """Ethernet/IPv4/TCP, SLL2/IPv6/UDP and raw IPv4 frames. A packet seed
    is three control bytes (link type index, extra wire length, shorter
    flag) and the frame."""
    ipv4_tcp = (struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + 8, 1, 0, 64, 6, 0,
                            bytes([198, 18, 0, 10]), bytes([198, 18, 0, 11]))
                + struct.pack("!HHIIBBHHH", 40000, 2222, 1, 0, 0x50, 0x18,
                              512, 0, 0) + b"gradient")
    ether = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ipv4_tcp
    ipv6_udp = (struct.pack("!IHBB", 0x60000000, 8 + 4, 17, 64)
                + bytes(16) + bytes(15) + b"\x01"
                + struct.pack("!HHHH", 5000, 5001, 12, 0) + b"ping")
    sll2 = (struct.pack("!HHIHBB", 0x86DD, 0, 3, 1, 4, 6) + b"\x02" * 8
            + ipv6_udp)
    write("packet", "ether-ipv4-tcp", bytes([0, 0, 0]) + ether)
    write("packet", "sll2-ipv6-udp", bytes([5, 3, 0]) + sll2)
    write("packet", "raw-ipv4-snapped", bytes([1, 200, 0]) + ipv4_tcp[:40])
    return ether, ipv4_tcp


def pcap_files(ether, ipv4_tcp):
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    records = b""
    for i, frame in enumerate([ether, ether[:54]]):
        records += struct.pack("<IIII", 1700000000 + i, 1000 * i,
                               len(frame), len(ether)) + frame
    write("pcap_file", "ether.pcap", header + records)
    raw = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 128, 101)
    raw += struct.pack("<IIII", 1700000000, 5, len(ipv4_tcp),
                       len(ipv4_tcp)) + ipv4_tcp
    write("pcap_file", "raw-nanosecond.pcap", raw)


def series(metric, values):
    return {"metric": metric, "values": [[t, v] for t, v in values]}


def cluster_view():
    worker = {"namespace": "training", "pod": "ctr-worker-0",
              "training_job": "ctr", "role": "worker"}
    ps = dict(worker, pod="ctr-ps-0", role="ps")
    peer = dict(worker, peer_namespace="training", peer_pod="ctr-ps-0",
                peer_role="ps")
    times = [1000 + 5 * i for i in range(6)]
    ramp = lambda rate: [(t, str(rate * (t - 1000))) for t in times]
    answers = {
        "cpu": [series(worker, ramp(0.9)), series(ps, ramp(1.0))],
        "info": [series(dict(worker, node="node-a", uid="u1"),
                        [(t, "1") for t in times]),
                 series(dict(ps, node="node-b", uid="u2"),
                        [(t, "1") for t in times])],
        "peer_rx": [series(peer, ramp(4e6))],
        "peer_tx": [series(peer, ramp(1e6))],
        "node_cpus": [series({"node": "node-a"}, [(t, "8") for t in times])],
        "nic_speed": [series({"node": "node-a", "device": "eth0"},
                             [(1000, "1.25e8")])],
        "nic_rx": [series({"node": "node-a", "device": "eth0"},
                          [(1000, "0"), (1005, "NaN"), (1010, "+Inf")])],
        "roster": [{"metric": dict(worker, node="node-a"),
                    "value": [1025, "1"]}],
    }
    write("cluster_view", "ps-job.json", json.dumps(answers))


def http_queries():
    # Method index, path, Accept-Encoding, then key=value lines.
    write("http_query", "profile",
          b"\x00/api/v1/profile\ngzip\nnamespace=training\npod=ctr-ps-0\n"
          b"seconds=2.5\ntype=offcpu\nhz=99\nformat=folded")
    write("http_query", "profile-top",
          b"\x00/api/v1/profile/top\n\nnamespace=training\npod=a\nn=5\n"
          b"type=cpu")
    write("http_query", "metrics-gzip",
          b"\x00/metrics\ngzip;q=0.5, identity;q=0, br\n")
    write("http_query", "report-head",
          b"\x01/api/v1/report\n\nformat=text")
    write("http_query", "post", b"\x02/healthz\n*;q=0\n")


def main():
    watch_events()
    tf_configs()
    quantities()
    small_files()
    proc_maps()
    pcap_files(*frames())
    cluster_view()
    http_queries()
    write("scenario", "minimal.json", json.dumps(
        {"name": "minimal", "duration_s": 30,
         "pods": [{"name": "ctr-worker-0", "role": "worker"}]}))


if __name__ == "__main__":
    main()
