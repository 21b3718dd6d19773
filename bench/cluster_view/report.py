#!/usr/bin/env python3
"""Summarises a bench/cluster_view/run.sh run: prints the table, writes JSON.

Reads run.sh's work folder: summary.json (generator), import.json, for each
case (cluster, job) NAME.time / NAME.proxy.time (/usr/bin/time -v), NAME.rc,
NAME.json (the report), NAME.err, NAME.queries.jsonl (proxy log).
"""

import argparse
import datetime
import json
import os
import platform
import socket
import sys

WALL_TARGET_S = 10
RSS_TARGET_MIB = 512


def read_time(path):
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        key, _, value = line.strip().rpartition(": ")
        if key == "Elapsed (wall clock) time (h:mm:ss or m:ss)":
            parts = [float(p) for p in value.split(":")]
            secs = 0.0
            for p in parts:
                secs = secs * 60 + p
            out["wall_seconds"] = secs
        elif key == "Maximum resident set size (kbytes)":
            out["max_rss_mib"] = round(int(value) / 1024, 1)
        elif key == "User time (seconds)":
            out["user_seconds"] = float(value)
        elif key == "System time (seconds)":
            out["system_seconds"] = float(value)
    return out


def case(work, name):
    res = {"rc": int(open(os.path.join(work, name + ".rc")).read().strip())}
    res.update(read_time(os.path.join(work, name + ".time")))
    res["through_proxy"] = read_time(os.path.join(work, name + ".proxy.time"))
    qpath = os.path.join(work, name + ".queries.jsonl")
    queries = [json.loads(l) for l in open(qpath)] if os.path.exists(qpath) \
        else []
    res["queries"] = len(queries)
    res["answer_bytes"] = sum(q["bytes"] for q in queries)
    res["largest_answer_bytes"] = max((q["bytes"] for q in queries), default=0)
    res["encodings"] = sorted({q["encoding"] or "identity" for q in queries})
    res["query_log"] = queries
    err = open(os.path.join(work, name + ".err")).read()
    if err.strip():
        res["stderr"] = err[-2000:]
    try:
        report = json.load(open(os.path.join(work, name + ".json")))
        res["diagnoses"] = sorted({(d["kind"], d["pod"] or d.get("node", ""))
                                  for d in report.get("diagnoses", [])
                                  if d.get("severity") in ("warning",
                                                           "critical")})
        res["diagnoses"] = [list(d) for d in res["diagnoses"]][:20]
        # Every severity, with what each costs its job: a fault whose
        # summary entry gives its cost is checked against it.
        res["costs"] = sorted(
            [d["kind"], d["pod"] or d.get("node", ""), d.get("severity"),
             d.get("evidence", {}).get("cost_fraction")]
            for d in report.get("diagnoses", []))[:50]
        res["ps_traffic_share"] = {
            j["namespace"] + "/" + j["training_job"]: j.get("ps_traffic_share")
            for j in report.get("jobs", [])}
        res["batches"] = report.get("source", {}).get("batches")
        triage = report.get("source", {}).get("triage", {})
        if triage.get("used"):
            res["triage"] = triage
        res["pods_in_report"] = sum(
            len(j.get("ps", [])) + len(j.get("workers", []))
            for j in report.get("jobs", []))
    except (ValueError, OSError):
        res["diagnoses"] = None
    res["meets_targets"] = (res["rc"] == 0 and
                            res.get("wall_seconds", 1e9) < WALL_TARGET_S and
                            res.get("max_rss_mib", 1e9) < RSS_TARGET_MIB)
    return res


# A fault's cost as the report gives it, against the generator's (absolute).
COST_TOLERANCE = 0.02


def severity_of_cost(cost):
    """The severity a cost implies (agent/diagnosis/impact.h: info below
    kInfoBelowCost, critical above kCriticalAboveCost)."""
    return "info" if cost < 0.05 else "critical" if cost > 0.5 else "warning"


def names_fault(case, fault):
    """Whether a report names the fault: at warning or above, or, for one
    whose cost the generator gives, at the severity that cost implies and
    with a cost within COST_TOLERANCE of it."""
    kind, name = fault[0], fault[1]
    if len(fault) < 3:
        return [kind, name] in case["diagnoses"]
    for k, n, severity, cost in case.get("costs", []):
        if [k, n] == [kind, name] and cost is not None:
            return (abs(cost - fault[2]) <= COST_TOLERANCE and
                    severity == severity_of_cost(fault[2]))
    return False


# The triage reports the recording rules' 1-minute shares for jobs it does not
# replay; the replay's are over its last window.
SHARE_TOLERANCE = 0.05


def share_difference(a, b):
    """Largest difference of one PS' share between two reports' jobs."""
    if set(a) != set(b):
        return float("inf")
    worst = 0.0
    for job, shares in a.items():
        other = b[job] or {}
        shares = shares or {}
        if set(shares) != set(other):
            return float("inf")
        for pod, v in shares.items():
            worst = max(worst, abs(v - other[pod]))
    return worst


def mib(n):
    return "%.1f MiB" % (n / 2**20)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--tsdb-bytes", type=int, required=True)
    ap.add_argument("--range", type=float, required=True)
    ap.add_argument("--step", type=float, required=True)
    ap.add_argument("--max-samples", type=int, required=True)
    ap.add_argument("--memory-limit-mib", type=int, required=True)
    ap.add_argument("--note", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless both reports ran and the whole "
                    "cluster's names the generated hot PS")
    args = ap.parse_args()
    w = args.work
    summary = json.load(open(os.path.join(w, "summary.json")))
    imp = json.load(open(os.path.join(w, "import.json")))
    prom = {}
    mpath = os.path.join(w, "prometheus.metrics")
    if os.path.exists(mpath):
        for line in open(mpath):
            k, v = line.split()
            prom[k] = float(v)
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"),
        "machine": {"hostname": socket.gethostname(),
                    "cpus": os.cpu_count(), "kernel": platform.release(),
                    "loadavg": list(os.getloadavg()),
                    "memory_bytes": os.sysconf("SC_PAGE_SIZE") *
                    os.sysconf("SC_PHYS_PAGES")},
        "note": args.note,
        "cluster": summary,
        "import": imp,
        "tsdb_bytes": args.tsdb_bytes,
        "report_args": {"range_seconds": args.range,
                        "step_seconds": args.step,
                        "query_max_samples": args.max_samples,
                        "cli_address_space_limit_mib": args.memory_limit_mib},
        "prometheus_after": prom,
        "cases": {"whole_cluster": case(w, "cluster"),
                  "one_job": case(w, "job")},
    }
    if os.path.exists(os.path.join(w, "unbatched.rc")):
        result["cases"]["whole_cluster_one_window"] = case(w, "unbatched")
    if os.path.exists(os.path.join(w, "exhaustive.rc")):
        result["cases"]["whole_cluster_no_triage"] = case(w, "exhaustive")
    rows = [("series", "%d" % summary["series"]),
            ("samples", "%d" % summary["samples"]),
            ("TSDB size", mib(args.tsdb_bytes))]
    if "text_bytes" in imp:
        rows += [("OpenMetrics text", mib(imp["text_bytes"])),
                 ("generate time", "%.0f s" % imp["generate_seconds"]),
                 ("import time (promtool, %d parts)" % imp["shards"],
                  "%.0f s" % imp["import_seconds"]),
                 ("import peak RSS", "%.0f MiB" %
                  (imp["import_max_rss_kib"] / 1024))]
    for label, key in (("whole cluster", "whole_cluster"),
                       ("one job", "one_job"),
                       ("whole cluster, one window", "whole_cluster_one_window"),
                       ("whole cluster, no triage",
                        "whole_cluster_no_triage")):
        if key not in result["cases"]:
            continue
        c = result["cases"][key]
        status = "ok" if c["rc"] == 0 else "FAILED rc=%d" % c["rc"]
        rows += [
            ("%s: wall / CPU / peak RSS" % label,
             "%.2f s / %.2f s / %.1f MiB (%s)%s" % (
                c.get("wall_seconds", float("nan")),
                c.get("user_seconds", float("nan")) +
                c.get("system_seconds", float("nan")),
                c.get("max_rss_mib", float("nan")), status,
                "" if key != "whole_cluster" else
                (" target <%d s, <%d MiB: %s" % (
                    WALL_TARGET_S, RSS_TARGET_MIB,
                    "pass" if c["meets_targets"] else "miss")))),
            ("%s: queries / answer bytes" % label, "%d / %s (largest %s)" % (
                c["queries"], mib(c["answer_bytes"]),
                mib(c["largest_answer_bytes"]))),
        ]
        if c.get("triage"):
            t = c["triage"]
            rows.append(("%s: triage" % label,
                         "replayed %d of %d jobs, %d pods with their jobs, %d alone (%d training pods listed; %s)%s" % (
                             t["jobs_replayed"], t["jobs"],
                             t["pods_replayed"], t.get("pods_without_jobs_replayed", 0), t["training_pods"],
                             ", ".join("%s %d" % kv for kv in
                                       sorted(t["flagged_by"].items())),
                             "" if t.get("recording_rules") else
                             ", raw series: no recording rules")))
    width = max(len(r[0]) for r in rows)
    print("cluster view at %d nodes, %d pods, range %g s step %g s" % (
        summary["nodes"], summary["pods"], args.range, args.step))
    for k, v in rows:
        print("  %-*s  %s" % (width, k, v))
    for key, c in result["cases"].items():
        if c.get("stderr"):
            print("  %s stderr: %s" % (key, c["stderr"].strip()[-300:]))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
        print("wrote " + args.out)
    if args.check:
        hot = ["hot_parameter_server", summary["largest_job"]["name"] + "-ps-0"]
        cases = result["cases"].values()
        if any(c["rc"] != 0 for c in cases):
            print("check failed: a report exited non-zero")
            return 1
        if hot not in result["cases"]["whole_cluster"]["diagnoses"]:
            print("check failed: the whole-cluster report does not name %s"
                  " (it names %s)" % (hot, result["cases"]["whole_cluster"]
                                      ["diagnoses"]))
            return 1
        if hot not in result["cases"]["one_job"]["diagnoses"]:
            print("check failed: the one-job report does not name %s" % hot)
            return 1
        for fault in summary.get("faults", []):
            for key, c in result["cases"].items():
                if key != "one_job" and not names_fault(c, fault):
                    print("check failed: %s does not name %s (it names %s)"
                          % (key, fault, c["diagnoses"] if len(fault) < 3
                             else c.get("costs")))
                    return 1
        one = result["cases"].get("whole_cluster_one_window")
        exhaustive = result["cases"].get("whole_cluster_no_triage")
        if one is not None and exhaustive is not None:
            for field in ("diagnoses", "ps_traffic_share"):
                if exhaustive.get(field) != one.get(field):
                    print("check failed: %s differ between %s batches and one"
                          " window: %s vs %s" % (field,
                                                 exhaustive.get("batches"),
                                                 exhaustive.get(field),
                                                 one.get(field)))
                    return 1
            print("check passed: %s batches give the one window's answer" %
                  exhaustive.get("batches"))
        reference = one or exhaustive
        if reference is not None:
            triaged = result["cases"]["whole_cluster"]
            if not triaged.get("triage"):
                print("check failed: the whole-cluster report did not triage")
                return 1
            if triaged["diagnoses"] != reference["diagnoses"]:
                print("check failed: the triage changed the diagnoses: %s vs "
                      "%s" % (triaged["diagnoses"], reference["diagnoses"]))
                return 1
            worst = share_difference(triaged["ps_traffic_share"],
                                     reference["ps_traffic_share"])
            if worst > SHARE_TOLERANCE:
                print("check failed: triaged PS shares differ by %.3f" % worst)
                return 1
            print("check passed: the triage (%d of %d jobs replayed) gives "
                  "the same diagnoses, PS shares within %.3f" % (
                      triaged["triage"]["jobs_replayed"],
                      triaged["triage"]["jobs"], worst))
        print("check passed: both views name %s %s" % tuple(hot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
