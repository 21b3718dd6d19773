// Metric names a PromQL expression reads (a small lexer, no full parser):
// string literals, label matchers {...}, grouping clauses by/without/on/
// ignoring/group_left/group_right (...), range/offset brackets, function
// calls, keywords, numbers and durations are skipped; what is left are
// metric names.
const KEYWORDS = new Set(["and", "or", "unless", "by", "without", "on", "ignoring", "group_left",
  "group_right", "bool", "offset", "sum", "min", "max", "avg", "count", "stddev", "stdvar",
  "topk", "bottomk", "quantile", "count_values", "group", "inf", "nan", "atan2"]);

export function metricNames(expr) {
  let s = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  s = s.replace(/\{[^}]*\}/g, " ");
  s = s.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  s = s.replace(/\[[^\]]*\]/g, " ");
  const names = new Set();
  const re = /(\$?[a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g;
  let m;
  while ((m = re.exec(s))) {
    const [, id, call] = m;
    if (call || id.startsWith("$") || KEYWORDS.has(id.toLowerCase())) continue;
    const before = s[m.index - 1];
    if (before && /[0-9.]/.test(before)) continue; // 100e3, 1.5
    names.add(id);
  }
  return [...names];
}

// Metric names documented in docs/metrics.md: every `name` in backticks
// that looks like a metric (trainscope_*, process_*), and the per-level
// tables whose rows name only the suffix (`cpu_usage_seconds_total` under
// "trainscope_pod_<name>" / "trainscope_container_<name>").
export function documentedMetrics(markdown) {
  const names = new Set();
  for (const m of markdown.matchAll(/`([a-z_:][a-z0-9_:]*)(\{[^`]*\})?`/g)) names.add(m[1]);
  const expanded = new Set(names);
  for (const n of names) {
    expanded.add(`trainscope_pod_${n}`);
    expanded.add(`trainscope_container_${n}`);
  }
  return expanded;
}
