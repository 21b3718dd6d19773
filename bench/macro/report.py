#!/usr/bin/env python3
"""Turns the macro benchmark's points into tables with pass/miss per target
and one JSON file (bench/results/<date>-<machine>.json): the agent beside
node_exporter at each N, and at each N one column per variant (each feature
switched off in turn), medians over the runs.

  report.py --out FILE [--render BENCH_JSON] [--flows FLOWS_LOG]
            [--variants LIST] [--runs R] N:VARIANT:RUN=POINT...
  (N=POINT, the old form, is one run of the default variant.)
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics

import runs as runs_lib
from variants import VARIANTS

MIB = 1024 * 1024
# Issue 39: every default feature on, 110 pods, median of three runs.
TARGET_PODS = 110
TARGET_RUNS = 3
TARGET_CPU_SHARE = 0.005
TARGET_PEAK_RSS = 40 * MIB


def machine():
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) * 1024
    return {"hostname": platform.node(), "cpus": os.cpu_count(),
            "cpu_model": model, "memory_bytes": mem,
            "kernel": platform.release(), "loadavg": os.getloadavg()}


def render_ms(path):
    if not path:
        return None
    with open(path) as f:
        runs = [b for b in json.load(f)["benchmarks"]
                if b.get("run_type") == "iteration"]
    if not runs:
        return None
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    times = [b["real_time"] * scale[b["time_unit"]] for b in runs]
    return {"median_ms": statistics.median(times), "min_ms": min(times),
            "max_ms": max(times), "series": runs[0].get("series"),
            "repetitions": len(times)}


def flows(path):
    if not path:
        return None
    text = open(path).read()
    out = {"log_tail": text.splitlines()[-12:]}
    m = re.search(r"eBPF overhead vs no agent: ([-+0-9.]+)%; vs agent with "
                  r"--flows off: ([-+0-9.]+)%", text)
    if m:
        out["overhead_vs_none_pct"] = float(m.group(1))
        out["overhead_vs_off_pct"] = float(m.group(2))
    m = re.search(r"([0-9.]+)% of one CPU at ([0-9.]+) Gbit/s", text)
    if m:
        out["programs_share_of_one_cpu_pct"] = float(m.group(1))
    return out


def verdict(ok):
    return "n/a" if ok is None else ("pass" if ok else "MISS")


def print_side_by_side(points, ns, variant):
    """The agent beside node_exporter at each N (medians of `variant`'s
    runs); adds the per-sample cost ratio to each point."""
    print(f"agent ({variant}) beside node_exporter, median of "
          f"{points[ns[0]]['runs']} run(s) per N")
    print(f"{'N':>4} {'who':14} {'CPU s/min':>9} {'% core':>7} "
          f"{'RSS MiB':>7} {'peak':>6} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'KiB':>6} {'samples':>7} {'CPU/scrape ms':>13} "
          f"{'us CPU/sample':>13}")
    for n in ns:
        for who in runs_lib.WHO:
            r = points[n][who]
            per_sample = r["cpu_seconds_per_exported_sample"]
            print(f"{n:>4} {who:14} {r['cpu_seconds_per_minute']:>9.3f} "
                  f"{r['cpu_share_of_core'] * 100:>6.2f}% "
                  f"{r['rss_steady_bytes'] / MIB:>7.1f} "
                  f"{r['rss_peak_bytes'] / MIB:>6.1f} "
                  f"{r['scrape_seconds_median'] * 1e3:>7.2f} "
                  f"{r['scrape_seconds_p99'] * 1e3:>7.2f} "
                  f"{r['bytes'] / 1024:>6.0f} {r['samples']:>7.0f} "
                  f"{r['cpu_seconds_per_scrape'] * 1e3:>13.3f} "
                  f"{per_sample * 1e6 if per_sample else float('nan'):>13.3f}")
        ag, ne = points[n]["agent"], points[n]["node_exporter"]
        ratio = (ag["cpu_seconds_per_exported_sample"] /
                 ne["cpu_seconds_per_exported_sample"]
                 if ag["cpu_seconds_per_exported_sample"] and
                 ne["cpu_seconds_per_exported_sample"] else None)
        points[n]["ratio_cost_per_sample_agent_over_node_exporter"] = ratio
        print(f"{n:>4} ratio agent/node_exporter, CPU per exported sample: "
              f"{ratio if ratio is not None else float('nan'):.2f}")
    if len(ns) > 1:
        lo, hi = points[ns[0]]["agent"], points[ns[-1]]["agent"]
        print(f"growth {ns[0]}->{ns[-1]} pods: CPU x"
              f"{hi['cpu_seconds_per_minute'] / lo['cpu_seconds_per_minute']:.2f}, "
              f"RSS x{hi['rss_steady_bytes'] / lo['rss_steady_bytes']:.2f}, "
              f"samples x{hi['samples'] / lo['samples']:.2f}, "
              f"scrape p50 x{hi['scrape_seconds_median'] / lo['scrape_seconds_median']:.2f}")


def cell(entry, value):
    """One variant column's cell: `value(entry)` when measured, else why
    not."""
    if entry["status"] != "measured":
        return entry["status"]
    v = value(entry)
    return "-" if v is None else v


def pct(share):
    return f"{share * 100:.3f}%"


def mib(b):
    return f"{b / MIB:.1f}"


def spread(fmt, who, field):
    def show(e):
        lo, hi = e["spread"][who][field]
        return f"{fmt(lo)}-{fmt(hi)}" if e["runs"] > 1 else None
    return show


def saved(field, fmt):
    def show(e):
        s = e.get("saving_vs_default")
        return None if s is None else fmt(s[field])
    return show


# Rows of the variant table: label, cell of a measured variant.
ROWS = [
    ("runs", lambda e: str(e["runs"])),
    ("agent % of a core", lambda e: pct(e["agent"]["cpu_share_of_core"])),
    ("  min-max of runs", spread(pct, "agent", "cpu_share_of_core")),
    ("agent RSS steady MiB", lambda e: mib(e["agent"]["rss_steady_bytes"])),
    ("agent RSS peak MiB", lambda e: mib(e["agent"]["rss_peak_bytes"])),
    ("  min-max of runs", spread(mib, "agent", "rss_peak_bytes")),
    ("node_exporter % of a core",
     lambda e: pct(e["node_exporter"]["cpu_share_of_core"])),
    ("node_exporter RSS steady MiB",
     lambda e: mib(e["node_exporter"]["rss_steady_bytes"])),
    ("node_exporter RSS peak MiB",
     lambda e: mib(e["node_exporter"]["rss_peak_bytes"])),
    ("saving vs default, % of a core",
     saved("cpu_share_of_core", lambda v: f"{v * 100:+.3f} pts")),
    ("saving vs default, CPU",
     saved("cpu_relative", lambda v: "-" if v is None else f"{v * 100:+.0f}%")),
    ("saving vs default, RSS steady MiB",
     saved("rss_steady_bytes", lambda v: f"{v / MIB:+.1f}")),
    ("saving vs default, RSS peak MiB",
     saved("rss_peak_bytes", lambda v: f"{v / MIB:+.1f}")),
]


def print_variant_table(n, table):
    """One column per variant (a Markdown table, for docs/performance.md)."""
    names = list(table)
    rows = [[label] + [cell(table[v], show) for v in names]
            for label, show in ROWS]
    header = [f"N={n}, medians"] + names
    width = [max(len(r[i]) for r in rows + [header])
             for i in range(len(header))]

    def line(cells):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, width)) \
            + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in width) + "|")
    for r in rows:
        print(line(r))


def side_variant(by_n):
    """The variant of the side-by-side table: default when it ran at every
    N, else the first variant that did."""
    for v in VARIANTS:
        if all(v in by_v for by_v in by_n.values()):
            return v
    raise SystemExit("report.py: no variant ran at every N")


def issue_targets(top_n, top_default):
    """Issue 39's targets at `top_n` pods: None (n/a) for a pass that does
    not count (fewer pods or runs than the target asks) and for a run
    without the default variant."""
    def judge(value, limit):
        if top_default is None:
            return None
        if value > limit and top_n < TARGET_PODS:
            return False  # more pods only cost more
        if top_n < TARGET_PODS or top_default["runs"] < TARGET_RUNS:
            return None
        return value <= limit
    runs = top_default["runs"] if top_default else 0
    cpu = top_default["agent"]["cpu_share_of_core"] if top_default else None
    peak = top_default["agent"]["rss_peak_bytes"] if top_default else None
    return [
        {"target": f"agent CPU <= {TARGET_CPU_SHARE * 100:g}% of a core, "
                   f"every default feature on, {TARGET_PODS} pods, median "
                   f"of {TARGET_RUNS} runs (this run: {top_n} pods, "
                   f"{runs} run(s))",
         "value": cpu * 100 if top_default else None, "unit": "% core",
         "ok": judge(cpu, TARGET_CPU_SHARE) if top_default else None},
        {"target": f"agent peak RSS <= {TARGET_PEAK_RSS // MIB} MiB, every "
                   f"default feature on, {TARGET_PODS} pods, median of "
                   f"{TARGET_RUNS} runs (this run: {top_n} pods, {runs} "
                   "run(s))",
         "value": peak / MIB if top_default else None, "unit": "MiB",
         "ok": judge(peak, TARGET_PEAK_RSS) if top_default else None},
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--render", default="")
    ap.add_argument("--flows", default="")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--scrape-interval", type=float, default=5)
    ap.add_argument("--agent", default="")
    ap.add_argument("--note", default="")
    ap.add_argument("--variants", default="default")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("points", nargs="+")
    a = ap.parse_args()
    requested = [v for v in a.variants.split(",") if v]
    by_n = runs_lib.load(a.points)
    ns = sorted(by_n)
    side = side_variant(by_n)
    points = {n: runs_lib.reduce_runs(by_n[n][side]) for n in ns}
    print_side_by_side(points, ns, side)

    variants = {n: runs_lib.variant_table(by_n[n], requested) for n in ns}
    for n in ns:
        print()
        print_variant_table(n, variants[n])
    for v, (_, meaning) in VARIANTS.items():
        print(f"  {v}: {meaning}")

    top = points[ns[-1]]
    top_default = variants[ns[-1]]["default"]
    top_default = top_default if top_default["status"] == "measured" else None
    render = render_ms(a.render)
    fl = flows(a.flows)
    ratio = top["ratio_cost_per_sample_agent_over_node_exporter"]
    targets = issue_targets(ns[-1], top_default) + [
        {"target": "render < 5 ms at 10k series (BM_RenderMetrics/160)",
         "value": render["median_ms"] if render else None, "unit": "ms",
         "ok": render["median_ms"] < 5 if render else None},
        {"target": "CPU per exported sample below node_exporter's "
                   f"({ns[-1]} pods, {side})",
         "value": ratio, "unit": "x node_exporter",
         "ok": ratio < 1 if ratio is not None else None},
        {"target": "eBPF flow accounting < 3% throughput overhead "
                   "(vs agent --flows off)",
         "value": fl.get("overhead_vs_off_pct") if fl else None, "unit": "%",
         "ok": fl["overhead_vs_off_pct"] < 3
         if fl and "overhead_vs_off_pct" in fl else None},
    ]
    print()
    for t in targets:
        v = "not measured" if t["value"] is None else f"{t['value']:.3g} {t['unit']}"
        t["verdict"] = verdict(t["ok"])
        print(f"  [{t['verdict']:>4}] {t['target']}: {v}")
    if top_default is None:
        print("  (the CPU and RSS targets are for the default variant, "
              "which this run left out: n/a)")

    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"),
        "machine": machine(),
        "noise": ("Measured on a shared VM while other builds and tests ran; "
                  "CPU and latency figures are noisy (see loadavg). " + a.note),
        "method": {"seconds_per_n": a.seconds,
                   "scrape_interval_s": a.scrape_interval,
                   "agent_interval_s": 5, "agent": a.agent,
                   "runs": a.runs, "variants": requested,
                   "median_of_runs": True,
                   "side_by_side_variant": side,
                   "node_exporter": "Debian prometheus-node-exporter, default "
                                    "collectors, 127.0.0.1, measured beside "
                                    "each run"},
        "points": {str(n): points[n] for n in ns},
        "variants": {str(n): variants[n] for n in ns},
        "render_10k": render,
        "flows": fl,
        "targets": targets,
    }
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"\nwrote {a.out}")


if __name__ == "__main__":
    main()
