#!/usr/bin/env python3
"""One macro-benchmark point: watch the agent and node_exporter for a fixed
time while both are scraped at the same rate, then scrape each back to back
for latency. Prints one JSON object on stdout.

  measure.py --agent-pid P --agent-url URL --ne-pid P --ne-url URL
             [--seconds 60] [--scrape-interval 5] [--burst 100]
"""
import argparse
import http.client
import json
import os
import statistics
import sys
import time
import urllib.parse

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of the whole process (all threads), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def memory(pid):
    """(VmRSS, VmHWM) in bytes."""
    rss = hwm = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) * 1024
    return rss, hwm


def scrape(url):
    """One GET on a fresh connection, as Prometheus' first scrape does.
    Returns (seconds, bytes, samples)."""
    u = urllib.parse.urlsplit(url)
    start = time.perf_counter()
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.request("GET", u.path or "/metrics")
    resp = conn.getresponse()
    body = resp.read()
    elapsed = time.perf_counter() - start
    conn.close()
    if resp.status != 200:
        raise RuntimeError(f"{url}: HTTP {resp.status}")
    samples = sum(1 for line in body.split(b"\n")
                  if line and not line.startswith(b"#"))
    return elapsed, len(body), samples


def percentile(values, p):
    values = sorted(values)
    k = (len(values) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent-pid", type=int, required=True)
    ap.add_argument("--agent-url", required=True)
    ap.add_argument("--ne-pid", type=int, required=True)
    ap.add_argument("--ne-url", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--scrape-interval", type=float, default=5)
    ap.add_argument("--burst", type=int, default=100)
    a = ap.parse_args()
    targets = {"agent": (a.agent_pid, a.agent_url), "node_exporter":
               (a.ne_pid, a.ne_url)}
    out = {name: {"rss_samples": [], "scrapes": 0} for name in targets}

    # Steady phase: both scraped every interval, memory read every second.
    cpu0 = {n: cpu_seconds(p) for n, (p, _) in targets.items()}
    t0 = time.monotonic()
    next_scrape = t0
    while time.monotonic() - t0 < a.seconds:
        now = time.monotonic()
        if now >= next_scrape:
            for n, (_, url) in targets.items():
                _, size, samples = scrape(url)
                out[n]["scrapes"] += 1
                out[n]["bytes"], out[n]["samples"] = size, samples
            next_scrape += a.scrape_interval
        for n, (p, _) in targets.items():
            out[n]["rss_samples"].append(memory(p)[0])
        time.sleep(min(1.0, max(0.0, next_scrape - time.monotonic())))
    elapsed = time.monotonic() - t0
    for n, (p, _) in targets.items():
        r = out[n]
        used = cpu_seconds(p) - cpu0[n]
        r["steady_seconds"] = elapsed
        r["cpu_seconds_per_minute"] = used * 60 / elapsed
        r["cpu_share_of_core"] = used / elapsed
        # Everything the process spent, per sample it exported.
        r["cpu_seconds_per_exported_sample"] = (
            used / (r["scrapes"] * r["samples"]) if r["samples"] else None)
        rss = r.pop("rss_samples")
        r["rss_steady_bytes"] = statistics.median(rss[len(rss) // 2:])
        r["rss_peak_bytes"] = memory(p)[1]

    # Burst phase: back-to-back scrapes for latency and CPU per scrape. The
    # agent keeps sampling meanwhile; its steady rate is subtracted.
    for n, (p, url) in targets.items():
        r = out[n]
        c0, w0 = cpu_seconds(p), time.monotonic()
        lat = [scrape(url)[0] for _ in range(a.burst)]
        c1, w1 = cpu_seconds(p), time.monotonic()
        background = r["cpu_share_of_core"] * (w1 - w0) if n == "agent" else 0
        r["cpu_seconds_per_scrape"] = max(0.0, c1 - c0 - background) / a.burst
        r["scrape_seconds_median"] = statistics.median(lat)
        r["scrape_seconds_p99"] = percentile(lat, 0.99)
        r["burst_scrapes"] = a.burst
        r["rss_peak_bytes"] = memory(p)[1]
    # What ran, so a result file shows each variant's flags.
    with open(f"/proc/{a.agent_pid}/cmdline", "rb") as f:
        out["agent_cmdline"] = [x.decode() for x in f.read().split(b"\0") if x]
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
