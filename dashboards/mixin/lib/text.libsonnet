// Words for alert descriptions that quote a _config setting, so the text
// stays true when a user changes the setting.
{
  // '5m' -> '5 minutes', '1h' -> '1 hour', '30s' -> '30 seconds'.
  duration(d)::
    local units = { s: 'second', m: 'minute', h: 'hour', d: 'day' };
    local n = std.parseInt(d[:std.length(d) - 1]);
    local unit = units[d[std.length(d) - 1]];
    '%d %s%s' % [n, unit, if n == 1 then '' else 's'],

  // 0.5 -> 'half', 0.25 -> '25%'.
  fraction(r)::
    if r == 0.5 then 'half' else '%g%%' % (100 * r),
}
