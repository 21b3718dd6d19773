// The panel kinds the Trainscope dashboards use, with the house style (legend
// table on the right, multi tooltip, ${datasource} everywhere) set once.
// The objects are the JSON Grafana's Foundation SDK writes for these panels,
// defaults included (the dashboards were built with it before the mixin
// moved to jsonnet), so imported dashboards look as they did.
local ds = { type: 'prometheus', uid: '${datasource}' };

// SDK defaults every panel kind carries.
local panelBase(type) = {
  type: type,
  transparent: false,
  repeatDirection: 'h',
  datasource: ds,
};

local lastValue = { calcs: ['lastNotNull'], fields: '', values: false };

// The layout (`pos`), ids and refIds are set here so the JSON is stable.
local common(base, title, description, pos, queries, unit, min, max, decimals, steps) =
  base {
    title: title,
    description: description,
    gridPos: pos,
    fieldConfig+: {
      defaults+: { unit: unit }
                 + (if min != null then { min: min } else {})
                 + (if max != null then { max: max } else {})
                 + (if decimals != null then { decimals: decimals } else {})
                 + (if steps != null then
                      { thresholds: { mode: 'absolute', steps: steps } }
                    else {}),
      overrides: [],
    },
    targets: [
      queries[i] { refId: std.char(std.codepoint('A') + i) }
      for i in std.range(0, std.length(queries) - 1)
    ],
  };

local query(expr, legend) = {
  expr: expr,
  datasource: ds,
  legendFormat: if legend == null then '__auto' else legend,
};

{
  datasource:: ds,

  // Queries ----------------------------------------------------------------
  q(expr, legend=null):: query(expr, legend) { range: true, instant: false },
  instant(expr, legend=null):: query(expr, legend) { instant: true, range: false },
  tableQuery(expr):: self.instant(expr) { format: 'table' },

  // Panels -----------------------------------------------------------------
  ts(title, description, pos, queries, unit, min=null, max=null, decimals=null, steps=null)::
    common(panelBase('timeseries') {
      options: {
        legend: {
          displayMode: 'table',
          placement: 'right',
          showLegend: true,
          calcs: ['lastNotNull', 'max'],
        },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
      fieldConfig: { defaults: { custom: {} } },
    }, title, description, pos, queries, unit, min, max, decimals, steps),

  statPanel(title, description, pos, queries, unit, min=null, max=null, decimals=null, steps=null)::
    common(panelBase('stat') {
      options: {
        graphMode: 'area',
        colorMode: 'value',
        justifyMode: 'auto',
        textMode: 'auto',
        wideLayout: true,
        showPercentChange: false,
        reduceOptions: lastValue,
        percentChangeColorMode: 'standard',
        orientation: 'auto',
      },
    }, title, description, pos, queries, unit, min, max, decimals, steps),

  barGauge(title, description, pos, queries, unit, min=null, max=null, decimals=null, steps=null)::
    common(panelBase('bargauge') {
      options: {
        displayMode: 'gradient',
        valueMode: 'color',
        namePlacement: 'auto',
        showUnfilled: true,
        sizing: 'auto',
        minVizWidth: 8,
        minVizHeight: 16,
        legend: { displayMode: 'list', placement: 'bottom', showLegend: false, calcs: [] },
        reduceOptions: lastValue,
        maxVizHeight: 300,
        orientation: 'horizontal',
      },
    }, title, description, pos, queries, unit, min, max, decimals, steps),

  // A table of instant queries merged into one frame; `hide` names columns
  // to leave out (Time by default).
  tablePanel(title, description, pos, queries, unit, hide={ Time: true })::
    common(panelBase('table') {
      options: {
        frameIndex: 0,
        showHeader: true,
        showTypeIcons: false,
        footer: { show: false, reducer: [], countRows: false },
        cellHeight: 'sm',
        sortBy: [{ displayName: 'Value', desc: true }],
      },
      fieldConfig: { defaults: { custom: { align: 'auto', inspect: false } } },
      transformations: [
        { id: 'merge', options: {} },
        { id: 'organize', options: { excludeByName: hide } },
      ],
    }, title, description, pos, queries, unit, null, null, null, null),

  // Rows are not collapsed: the panels below a row follow it at the top
  // level, as Grafana stores them.
  row(title, y):: {
    type: 'row',
    collapsed: false,
    panels: [],
    title: title,
    gridPos: { h: 1, w: 24, x: 0, y: y },
  },

  // Variables --------------------------------------------------------------
  local variableBase(type, name, label) = {
    type: type,
    name: name,
    label: label,
    skipUrlSync: false,
    allowCustomValue: true,
    auto: false,
    auto_min: '10s',
    auto_count: 30,
  },

  queryVariable(name, label, query):: variableBase('query', name, label) {
    datasource: ds,
    query: query,
    definition: query,
    refresh: 2,  // on time range change
    sort: 1,  // alphabetical, ascending
    multi: true,
    includeAll: true,
    allValue: '.*',
    current: { selected: true, text: ['All'], value: ['$__all'] },
  },

  datasourceVariable():: variableBase('datasource', 'datasource', 'Data source') {
    multi: false,
    includeAll: false,
    query: 'prometheus',
  },

  // Dashboard --------------------------------------------------------------
  // `items`: rows and panels in reading order; ids follow that order.
  dashboard(uid, title, description, variables, items):: {
    uid: uid,
    title: title,
    description: description,
    tags: ['trainscope'],
    editable: true,
    graphTooltip: 1,  // shared crosshair
    fiscalYearStartMonth: 0,
    schemaVersion: 42,
    refresh: '30s',
    time: { from: 'now-1h', to: 'now' },
    timezone: '',
    annotations: {},
    links: [{
      title: 'Trainscope',
      type: 'dashboards',
      icon: '',
      tooltip: '',
      tags: ['trainscope'],
      asDropdown: true,
      placement: 'inControlsMenu',
      targetBlank: false,
      includeVars: true,
      keepTime: true,
    }],
    templating: { list: [$.datasourceVariable()] + variables },
    panels: [items[i] { id: i + 1 } for i in std.range(0, std.length(items) - 1)],
    // What import tools (grafana.com, the Grafana UI) read to check versions.
    __inputs: [],
    __requires: [
      { type: 'grafana', id: 'grafana', name: 'Grafana', version: '10.4.0' },
      { type: 'datasource', id: 'prometheus', name: 'Prometheus', version: '1.0.0' },
    ],
  },
}
