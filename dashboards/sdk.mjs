// Thin helpers over Grafana's Foundation SDK (@grafana/grafana-foundation-sdk,
// pinned in tests/deploy/package.json): the panel kinds the Trainscope
// dashboards use, with the house style (legend table on the right, multi
// tooltip, ${datasource} everywhere) set once. generate.mjs builds the
// dashboards from these; the SDK writes the Grafana JSON.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "tests/deploy/package.json"));
const sdk = (m) => require(`@grafana/grafana-foundation-sdk/${m}`);
const dashboard = sdk("dashboard");
const common = sdk("common");
const prometheus = sdk("prometheus");
const timeseries = sdk("timeseries");
const stat = sdk("stat");
const bargauge = sdk("bargauge");
const table = sdk("table");

export const DS = { type: "prometheus", uid: "${datasource}" };

// Queries ------------------------------------------------------------------
export function q(expr, legend) {
  return new prometheus.DataqueryBuilder().datasource(DS).expr(expr).legendFormat(legend ?? "__auto").range();
}
export function instant(expr, legend) {
  return new prometheus.DataqueryBuilder().datasource(DS).expr(expr).legendFormat(legend ?? "__auto").instant();
}
export function tableQuery(expr) {
  return new prometheus.DataqueryBuilder().datasource(DS).expr(expr).legendFormat("__auto")
    .format(prometheus.PromQueryFormat.Table).instant();
}

// Panels -------------------------------------------------------------------
function thresholds(steps) {
  return new dashboard.ThresholdsConfigBuilder().mode(dashboard.ThresholdsMode.Absolute).steps(steps);
}
// The layout (`pos`), ids and refIds are set here so the JSON is stable.
function common_(builder, title, description, pos, queries, unit, extra) {
  builder.title(title).description(description).datasource(DS).gridPos(pos).unit(unit);
  queries.forEach((query, i) => builder.withTarget(query.refId(String.fromCharCode(65 + i))));
  if (extra.min !== undefined) builder.min(extra.min);
  if (extra.max !== undefined) builder.max(extra.max);
  if (extra.decimals !== undefined) builder.decimals(extra.decimals);
  if (extra.steps) builder.thresholds(thresholds(extra.steps));
  return builder;
}
export const ts = (title, description, pos, queries, unit, extra = {}) =>
  common_(new timeseries.PanelBuilder(), title, description, pos, queries, unit, extra)
    .legend(new common.VizLegendOptionsBuilder().displayMode(common.LegendDisplayMode.Table)
      .placement(common.LegendPlacement.Right).showLegend(true).calcs(["lastNotNull", "max"]))
    .tooltip(new common.VizTooltipOptionsBuilder().mode(common.TooltipDisplayMode.Multi).sort(common.SortOrder.Descending));

const lastValue = () => new common.ReduceDataOptionsBuilder().calcs(["lastNotNull"]).fields("").values(false);
export const statPanel = (title, description, pos, queries, unit, extra = {}) =>
  common_(new stat.PanelBuilder(), title, description, pos, queries, unit, extra)
    .reduceOptions(lastValue()).colorMode(common.BigValueColorMode.Value)
    .graphMode(common.BigValueGraphMode.Area).textMode(common.BigValueTextMode.Auto);

export const barGauge = (title, description, pos, queries, unit, extra = {}) =>
  common_(new bargauge.PanelBuilder(), title, description, pos, queries, unit, extra)
    .reduceOptions(lastValue()).orientation(common.VizOrientation.Horizontal)
    .displayMode(common.BarGaugeDisplayMode.Gradient).showUnfilled(true);

// A table of instant queries merged into one frame; `hide` names columns
// to leave out (Time by default).
export const tablePanel = (title, description, pos, queries, unit, hide = { Time: true }) =>
  common_(new table.PanelBuilder(), title, description, pos, queries, unit, {})
    .showHeader(true)
    .sortBy([new common.TableSortByFieldStateBuilder().displayName("Value").desc(true)])
    .withTransformation({ id: "merge", options: {} })
    .withTransformation({ id: "organize", options: { excludeByName: hide } });

export const row = (title, y) => new dashboard.RowBuilder(title).gridPos({ h: 1, w: 24, x: 0, y });

// Variables ----------------------------------------------------------------
export function queryVariable(name, label, query) {
  return new dashboard.QueryVariableBuilder(name).label(label).datasource(DS)
    .query(query).definition(query)
    .refresh(dashboard.VariableRefresh.OnTimeRangeChanged).sort(dashboard.VariableSort.AlphabeticalAsc)
    .multi(true).includeAll(true).allValue(".*")
    .current({ selected: true, text: ["All"], value: ["$__all"] });
}
export const datasourceVariable = () =>
  new dashboard.DatasourceVariableBuilder("datasource").label("Data source").type("prometheus");

// Dashboard ----------------------------------------------------------------
// `items`: rows and panels in reading order (rows are not collapsed, so the
// panels below a row follow it at the top level, as Grafana stores them).
export function buildDashboard({ uid, title, description, variables, items }) {
  const d = new dashboard.DashboardBuilder(title).uid(uid).description(description)
    .tags(["trainscope"]).editable().tooltip(dashboard.DashboardCursorSync.Crosshair)
    .refresh("30s").time({ from: "now-1h", to: "now" }).timezone("")
    .link(new dashboard.DashboardLinkBuilder("Trainscope").type(dashboard.DashboardLinkType.Dashboards)
      .tags(["trainscope"]).asDropdown(true).includeVars(true).keepTime(true));
  for (const v of [datasourceVariable(), ...variables]) d.withVariable(v);
  let id = 1;
  for (const item of items) {
    item.id(id++);
    if (item instanceof dashboard.RowBuilder) d.withRow(item);
    else d.withPanel(item);
  }
  const json = d.build();
  // What import tools (grafana.com, the Grafana UI) read to check versions.
  json.__inputs = [];
  json.__requires = [
    { type: "grafana", id: "grafana", name: "Grafana", version: "10.4.0" },
    { type: "datasource", id: "prometheus", name: "Prometheus", version: "1.0.0" },
  ];
  return json;
}
