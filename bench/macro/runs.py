"""Groups the macro benchmark's points by pod count and variant and reduces
each group's runs to medians (bench/macro/report.py prints them)."""
import json
import statistics

from variants import NOT_BUILT, VARIANTS

WHO = ("agent", "node_exporter")
# Fields whose spread over the runs the report shows next to the median.
SPREAD = ("cpu_share_of_core", "rss_steady_bytes", "rss_peak_bytes")


def parse_point_arg(arg):
    """'N=FILE' (one run of the default variant, the old form) or
    'N:VARIANT:RUN=FILE' -> (N, VARIANT, RUN, FILE)."""
    key, path = arg.split("=", 1)
    parts = key.split(":")
    if len(parts) == 1:
        return int(parts[0]), "default", 1, path
    if len(parts) != 3 or parts[1] not in VARIANTS:
        raise SystemExit(f"report.py: bad point {arg!r} "
                         "(N=FILE or N:VARIANT:RUN=FILE)")
    return int(parts[0]), parts[1], int(parts[2]), path


def load(args):
    """{N: {variant: [point, ...]}}, runs in run order."""
    found = {}
    for arg in args:
        n, variant, run, path = parse_point_arg(arg)
        with open(path) as f:
            found.setdefault(n, {}).setdefault(variant, []).append(
                (run, json.load(f)))
    return {n: {v: [p for _, p in sorted(rs, key=lambda r: r[0])]
                for v, rs in by_v.items()} for n, by_v in found.items()}


def median_of(dicts):
    """Field by field: the median of the numbers, None when a run had none."""
    out = {}
    for key in dicts[0]:
        values = [d.get(key) for d in dicts]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool)
               for v in values):
            out[key] = statistics.median(values)
        else:
            out[key] = values[0] if all(v == values[0] for v in values) \
                else None
    return out


def reduce_runs(points):
    """One variant's runs -> {'agent': medians, 'node_exporter': medians,
    'runs': R, 'spread': {who: {field: [min, max]}}, 'per_run': [...]}."""
    out = {who: median_of([p[who] for p in points]) for who in WHO}
    out["runs"] = len(points)
    out["spread"] = {who: {f: [min(p[who][f] for p in points),
                               max(p[who][f] for p in points)]
                           for f in SPREAD} for who in WHO}
    out["per_run"] = [dict({who: {f: p[who][f] for f in SPREAD}
                            for who in WHO},
                           agent_cmdline=p.get("agent_cmdline"))
                      for p in points]
    return out


def saving(default, variant):
    """What switching the feature off saves against `default` (positive =
    cheaper without it)."""
    d, v = default["agent"], variant["agent"]
    cpu = d["cpu_share_of_core"] - v["cpu_share_of_core"]
    return {
        "cpu_share_of_core": cpu,
        "cpu_relative": cpu / d["cpu_share_of_core"]
        if d["cpu_share_of_core"] else None,
        "rss_steady_bytes": d["rss_steady_bytes"] - v["rss_steady_bytes"],
        "rss_peak_bytes": d["rss_peak_bytes"] - v["rss_peak_bytes"],
    }


def variant_table(by_variant, requested):
    """{variant: entry} for every known variant, in table order: 'measured'
    entries carry the medians; the others say why there are none."""
    table = {}
    for name, (flags, meaning) in VARIANTS.items():
        entry = {"flags": flags, "meaning": meaning}
        if name in by_variant:
            entry.update(status="measured", **reduce_runs(by_variant[name]))
        elif flags is None:
            entry["status"] = NOT_BUILT
        else:
            entry["status"] = "not run" if name not in requested \
                else "no data"
        table[name] = entry
    base = table["default"]
    for name, entry in table.items():
        if entry["status"] == "measured" and base["status"] == "measured" \
                and name != "default":
            entry["saving_vs_default"] = saving(base, entry)
    return table
