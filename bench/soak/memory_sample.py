#!/usr/bin/env python3
"""Memory soak sampler: scrapes the agent's /metrics and /api/v1/report every
--scrape-interval seconds and, every --sample-interval seconds, records the
agent's RSS and its memory cgroup's usage and OOM counters. At the end writes
one JSON object (the curve and its summary) to --out.

  memory_sample.py --pid P --url http://127.0.0.1:PORT --cgroup DIR --v2 0|1
                   --limit BYTES --interval S --history N [--seconds 3600]

The summary's "history_full_at_s" is interval x history after the agent's
start: from then on the diagnosis window holds its maximum number of
snapshots, so memory should stop growing. "rss_slope_last_30min_bytes_per_h"
is the least-squares slope of RSS over the last half hour (or the last half
of a shorter run).
"""
import argparse
import http.client
import json
import os
import re
import signal
import sys
import time


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def read_int(path):
    try:
        with open(path) as f:
            v = f.read().strip()
        return int(v) if v.isdigit() else None
    except OSError:
        return None


def read_keyed(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[1].isdigit():
                    out[parts[0]] = int(parts[1])
    except OSError:
        pass
    return out


def cgroup_sample(cg, v2):
    """(usage, peak, oom, oom_kill, limit_hits) of the memory cgroup.
    v2: memory.events oom / oom_kill / max. v1 has no OOM counter, only
    under_oom (0/1 now) and oom_kill in memory.oom_control; failcnt counts
    the times usage reached the limit (reclaim, not necessarily an OOM)."""
    if v2:
        ev = read_keyed(f"{cg}/memory.events")
        return (read_int(f"{cg}/memory.current"),
                read_int(f"{cg}/memory.peak"), ev.get("oom", 0),
                ev.get("oom_kill", 0), ev.get("max", 0))
    oc = read_keyed(f"{cg}/memory.oom_control")
    return (read_int(f"{cg}/memory.usage_in_bytes"),
            read_int(f"{cg}/memory.max_usage_in_bytes"),
            oc.get("under_oom", 0), oc.get("oom_kill", 0),
            read_int(f"{cg}/memory.failcnt") or 0)


def unlabelled(metrics, name):
    """The value of the unlabelled sample `name` in a /metrics body."""
    m = re.search(rf"^{name} (\S+)$", metrics or "", re.MULTILINE)
    return float(m.group(1)) if m else None


def sample(a, now, metrics):
    usage, peak, oom, oom_kill, hits = cgroup_sample(a.cgroup, a.v2)
    s = {"t": round(now - a.started, 1), "rss": rss_bytes(a.pid),
         "heap_in_use": unlabelled(metrics, "trainscope_agent_heap_in_use_bytes"),
         "heap_free": unlabelled(metrics, "trainscope_agent_heap_free_bytes"),
         "cgroup_usage": usage, "cgroup_peak": peak, "oom": oom,
         "oom_kill": oom_kill, "limit_hits": hits}
    print(f"t={s['t']:7.0f}s rss={s['rss'] / 2**20:6.1f} MiB "
          f"heap={(s['heap_in_use'] or 0) / 2**20:5.1f}"
          f"+{(s['heap_free'] or 0) / 2**20:4.1f} MiB "
          f"cgroup={(usage or 0) / 2**20:6.1f} MiB oom={oom} "
          f"oom_kill={oom_kill}", file=sys.stderr, flush=True)
    return s


def get(host, port, path):
    """(ok, body) of GET path."""
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        return resp.status == 200, body.decode(errors="replace")
    finally:
        conn.close()


def slope_per_hour(points):
    """Least-squares slope of (t seconds, bytes) in bytes per hour."""
    n = len(points)
    if n < 2:
        return 0.0
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    den = sum((t - mt) ** 2 for t, _ in points)
    if den == 0:
        return 0.0
    return sum((t - mt) * (v - mv) for t, v in points) / den * 3600


def print_summary(s):
    m = 2**20
    peak = s["cgroup_peak_bytes"] or s["cgroup_usage_max_sampled_bytes"] or 0
    rows = [
        ("agent alive at end", str(s["agent_alive_at_end"])),
        ("RSS start", f"{(s['rss_start_bytes'] or 0) / m:.1f} MiB"),
        (f"RSS history full (t={s['history_full_at_s']:.0f}s)",
         f"{s['rss_history_full_bytes'] / m:.1f} MiB"
         if s["rss_history_full_bytes"] else "n/a (run too short)"),
        ("RSS end", f"{(s['rss_end_bytes'] or 0) / m:.1f} MiB"),
        ("RSS max", f"{(s['rss_max_bytes'] or 0) / m:.1f} MiB"),
        (f"RSS slope, last {s['rss_slope_window_s'] / 60:.0f} min",
         f"{s['rss_slope_last_30min_bytes_per_h'] / 1024:.0f} KiB/h"),
        ("heap in use / kept free, end",
         f"{(s['heap_in_use_end_bytes'] or 0) / m:.1f} / "
         f"{(s['heap_free_end_bytes'] or 0) / m:.1f} MiB"),
        (f"heap in use slope, last {s['rss_slope_window_s'] / 60:.0f} min",
         f"{s['heap_in_use_slope_last_30min_bytes_per_h'] / 1024:.0f} KiB/h"),
        ("cgroup usage max", f"{peak / m:.1f} MiB of "
         f"{s['limit_bytes'] / m:.0f} MiB"),
        ("oom / oom_kill", f"{s['oom_events']} / {s['oom_kill_events']}"),
        ("scrapes (failed)", f"{s['scrapes']} ({s['scrapes_failed']})"),
    ]
    for k, v in rows:
        print(f"{k:32} {v}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--cgroup", required=True)
    ap.add_argument("--v2", type=int, required=True)
    ap.add_argument("--limit", type=int, required=True)
    ap.add_argument("--interval", type=float, required=True)
    ap.add_argument("--history", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=3600)
    ap.add_argument("--scrape-interval", type=float, default=1)
    ap.add_argument("--sample-interval", type=float, default=30)
    ap.add_argument("--started", type=float, required=True,
                    help="agent start, seconds since the epoch")
    ap.add_argument("--meta", default="{}",
                    help="JSON object written at the top of --out")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    host, port = a.url.split("//", 1)[1].split(":")
    port = int(port)

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))

    samples, scrapes, failed = [], 0, 0
    begin = time.time()
    next_sample = begin
    while not stop and time.time() - begin < a.seconds:
        if not os.path.exists(f"/proc/{a.pid}"):
            print("memory_sample: the agent exited", file=sys.stderr)
            break
        metrics = None
        for path in ("/metrics", "/api/v1/report"):
            try:
                scrapes += 1
                ok, body = get(host, port, path)
                if not ok:
                    failed += 1
                elif path == "/metrics":
                    metrics = body
            except OSError:
                failed += 1
        now = time.time()
        if now >= next_sample:
            samples.append(sample(a, now, metrics))
            next_sample += a.sample_interval
        time.sleep(max(0.0, a.scrape_interval - (time.time() - now)))
    # The last point at the very end, so "end" means the end of the run.
    if os.path.exists(f"/proc/{a.pid}") and \
            (not samples or time.time() - a.started - samples[-1]["t"] > 5):
        try:
            metrics = get(host, port, "/metrics")[1]
        except OSError:
            metrics = None
        samples.append(sample(a, time.time(), metrics))

    alive = os.path.exists(f"/proc/{a.pid}")
    full_at = a.interval * a.history
    after_full = [s for s in samples if s["t"] >= full_at]
    end_t = samples[-1]["t"] if samples else 0
    window = min(1800.0, end_t / 2)
    tail = [(s["t"], s["rss"]) for s in samples if s["t"] >= end_t - window]
    heap_tail = [(s["t"], s["heap_in_use"]) for s in samples
                 if s["t"] >= end_t - window and s["heap_in_use"] is not None]
    usages = [s["cgroup_usage"] or 0 for s in samples]
    peaks = [s["cgroup_peak"] or 0 for s in samples]
    summary = {
        "seconds": round(end_t, 1),
        "agent_alive_at_end": alive,
        "history_full_at_s": full_at,
        "rss_start_bytes": samples[0]["rss"] if samples else None,
        "rss_history_full_bytes": after_full[0]["rss"] if after_full else None,
        "rss_end_bytes": samples[-1]["rss"] if samples else None,
        "rss_max_bytes": max((s["rss"] for s in samples), default=None),
        "cgroup_usage_max_sampled_bytes": max(usages, default=None),
        "cgroup_peak_bytes": max(peaks, default=None),
        "limit_bytes": a.limit,
        "oom_events": max((s["oom"] for s in samples), default=0),
        "oom_kill_events": max((s["oom_kill"] for s in samples), default=0),
        "limit_hits": max((s["limit_hits"] for s in samples), default=0),
        "rss_slope_window_s": window,
        "rss_slope_last_30min_bytes_per_h": round(slope_per_hour(tail)),
        "heap_in_use_end_bytes": samples[-1]["heap_in_use"] if samples else None,
        "heap_free_end_bytes": samples[-1]["heap_free"] if samples else None,
        "heap_in_use_slope_last_30min_bytes_per_h":
            round(slope_per_hour(heap_tail)),
        "scrapes": scrapes,
        "scrapes_failed": failed,
    }
    with open(a.out, "w") as f:
        json.dump({**json.loads(a.meta), "summary": summary,
                   "samples": samples}, f, indent=1)
    print_summary(summary)
    ok = alive and summary["oom_kill_events"] == 0 and \
        summary["oom_events"] == 0 and failed == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
