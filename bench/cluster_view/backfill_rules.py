#!/usr/bin/env python3
"""Backfill recording rules into an imported TSDB, as Prometheus would have
recorded them while scraping.

Evaluates the named recording rules of a rules file (the shipped
dashboards/alerts.yaml) over [--start, --end] at the group's interval through
a running Prometheus (/api/v1/query_range) and writes the answers as
OpenMetrics text for `promtool tsdb create-blocks-from openmetrics`. Rules
that read other recorded series need those imported first: run.sh backfills
in passes and restarts Prometheus in between.

(`promtool tsdb create-blocks-from rules` of Debian's 2.42 wrote no block for
these rules here, without an error: bench/cluster_view/run.sh.)
"""
import argparse
import json
import sys
import urllib.parse
import urllib.request

import yaml


def rules_by_name(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    out = {}
    for group in doc.get("groups", []):
        interval = group.get("interval", "60s")
        for rule in group.get("rules", []):
            if "record" in rule:
                out[rule["record"]] = (rule["expr"], interval)
    return out


def seconds(duration):
    units = {"s": 1, "m": 60, "h": 3600}
    return int(duration[:-1]) * units[duration[-1]]


def query_range(url, expr, start, end, step):
    params = urllib.parse.urlencode(
        {"query": expr, "start": start, "end": end, "step": step})
    with urllib.request.urlopen(url + "/api/v1/query_range?" + params,
                                timeout=600) as r:
        answer = json.load(r)
    if answer.get("status") != "success":
        raise SystemExit("backfill_rules: %s: %s" % (expr, answer))
    return answer["data"]["result"]


def label_text(name, labels):
    pairs = ",".join('%s="%s"' % (k, v.replace("\\", "\\\\")
                                  .replace('"', '\\"'))
                     for k, v in sorted(labels.items()) if k != "__name__")
    return "%s{%s}" % (name, pairs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--rules", required=True)
    ap.add_argument("--record", action="append", required=True)
    ap.add_argument("--start", type=int, required=True)
    ap.add_argument("--end", type=int, required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rules = rules_by_name(args.rules)
    series = 0
    with open(args.out, "w") as out:
        for name in args.record:
            if name not in rules:
                raise SystemExit("backfill_rules: no recording rule %s in %s"
                                 % (name, args.rules))
            expr, interval = rules[name]
            step = seconds(interval)
            # Rule evaluations fall on multiples of the interval.
            start = (args.start + step - 1) // step * step
            result = query_range(args.url, expr, start, args.end, step)
            out.write("# TYPE %s gauge\n" % name)
            for s in result:
                text = label_text(name, s["metric"])
                for t, v in s["values"]:
                    out.write("%s %s %s\n" % (text, v, t))
                series += 1
        out.write("# EOF\n")
    print(json.dumps({"records": args.record, "series": series}),
          file=sys.stderr)


if __name__ == "__main__":
    main()
