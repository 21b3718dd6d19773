#include "exposition/family_builder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

namespace trainscope {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// TextSerializer streams doubles with precision max_digits10 - 1 in the
// default float field, which is printf's %.16g; to_chars with the same
// precision in general format is specified to produce the same characters.
void AppendDouble(double value, std::string& out) {
  if (std::isnan(value)) {
    out += "Nan";
  } else if (std::isinf(value)) {
    out += value < 0 ? "-Inf" : "+Inf";
  } else {
    char buf[64];
    auto res =
        std::to_chars(buf, buf + sizeof buf, value, std::chars_format::general,
                      std::numeric_limits<double>::max_digits10 - 1);
    out.append(buf, res.ptr);
  }
}

template <typename Int>
void AppendInt(Int value, std::string& out) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, res.ptr);
}

bool NeedsEscape(char c) { return c == '\\' || c == '"' || c == '\n'; }

// Copies runs without special characters in one append each (label values
// rarely hold any).
void AppendEscaped(const std::string& value, std::string& out) {
  auto from = value.begin();
  for (auto at = std::find_if(from, value.end(), NeedsEscape);
       at != value.end(); at = std::find_if(at + 1, value.end(), NeedsEscape)) {
    out.append(from, at);
    // A newline becomes the two characters \n; a raw one would end the line.
    out += *at == '\n' ? "\\n" : std::string{'\\', *at};
    from = at + 1;
  }
  out.append(from, value.end());
}

// Name, suffix and labels, then a space. `extra_value` is a preformatted
// label value (quantile or le) appended after the metric's own labels.
void AppendHead(const MetricFamily& family, const ClientMetric& metric,
                std::string_view suffix, std::string_view extra_name,
                std::string_view extra_value, std::string& out) {
  out += family.name;
  out += suffix;
  if (!metric.label.empty() || !extra_name.empty()) {
    out += '{';
    const char* prefix = "";
    for (const auto& label : metric.label) {
      out += prefix;
      out += label.name;
      out += "=\"";
      AppendEscaped(label.value, out);
      out += '"';
      prefix = ",";
    }
    if (!extra_name.empty()) {
      out += prefix;
      out += extra_name;
      out += "=\"";
      out += extra_value;
      out += '"';
    }
    out += '}';
  }
  out += ' ';
}

void AppendTail(const ClientMetric& metric, std::string& out) {
  if (metric.timestamp_ms != 0) {
    out += ' ';
    AppendInt(metric.timestamp_ms, out);
  }
  out += '\n';
}

void AppendSample(const MetricFamily& family, const ClientMetric& metric,
                  double value, std::string& out) {
  AppendHead(family, metric, "", "", "", out);
  AppendDouble(value, out);
  AppendTail(metric, out);
}

void AppendSummary(const MetricFamily& family, const ClientMetric& metric,
                   std::string& out) {
  const auto& sum = metric.summary;
  AppendHead(family, metric, "_count", "", "", out);
  AppendInt(sum.sample_count, out);
  AppendTail(metric, out);
  AppendHead(family, metric, "_sum", "", "", out);
  AppendDouble(sum.sample_sum, out);
  AppendTail(metric, out);
  for (const auto& q : sum.quantile) {
    std::string quantile;
    AppendDouble(q.quantile, quantile);
    AppendHead(family, metric, "", "quantile", quantile, out);
    AppendDouble(q.value, out);
    AppendTail(metric, out);
  }
}

void AppendHistogram(const MetricFamily& family, const ClientMetric& metric,
                     std::string& out) {
  const auto& hist = metric.histogram;
  AppendHead(family, metric, "_count", "", "", out);
  AppendInt(hist.sample_count, out);
  AppendTail(metric, out);
  AppendHead(family, metric, "_sum", "", "", out);
  AppendDouble(hist.sample_sum, out);
  AppendTail(metric, out);
  double last = -std::numeric_limits<double>::infinity();
  for (const auto& b : hist.bucket) {
    std::string le;
    AppendDouble(b.upper_bound, le);
    AppendHead(family, metric, "_bucket", "le", le, out);
    last = b.upper_bound;
    AppendInt(b.cumulative_count, out);
    AppendTail(metric, out);
  }
  if (last != std::numeric_limits<double>::infinity()) {
    AppendHead(family, metric, "_bucket", "le", "+Inf", out);
    AppendInt(hist.sample_count, out);
    AppendTail(metric, out);
  }
}

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
    case MetricType::Summary:
      return "summary";
    case MetricType::Histogram:
      return "histogram";
    case MetricType::Untyped:
      return "untyped";
  }
  return "untyped";
}

}  // namespace

FamilyBuilder::FamilyBuilder(std::string name, std::string help,
                             prometheus::MetricType type) {
  family_.name = std::move(name);
  family_.help = std::move(help);
  family_.type = type;
}

FamilyBuilder& FamilyBuilder::Add(const LabelMap& labels,
                                  std::optional<double> value) {
  if (!value) return *this;
  prometheus::ClientMetric metric;
  metric.label.reserve(labels.size());
  for (const auto& [name, label_value] : labels) {
    metric.label.push_back({name, label_value});
  }
  switch (family_.type) {
    case prometheus::MetricType::Counter:
      metric.counter.value = *value;
      break;
    case prometheus::MetricType::Gauge:
    default:
      metric.gauge.value = *value;
      break;
  }
  family_.metric.push_back(std::move(metric));
  return *this;
}

void FamilyBuilder::MoveInto(std::vector<prometheus::MetricFamily>& out) {
  if (!family_.metric.empty()) out.push_back(std::move(family_));
}

LabelMap WithLabels(const LabelMap& base, const LabelMap& extra) {
  LabelMap merged = base;
  for (const auto& [k, v] : extra) merged[k] = v;
  return merged;
}

void AppendTextFormat(const std::vector<MetricFamily>& families,
                      std::string& out) {
  size_t series = 0;
  for (const auto& family : families) series += family.metric.size();
  out.reserve(out.size() + series * 160);  // pod series run 130-170 bytes
  for (const auto& family : families) {
    if (!family.help.empty()) {
      out += "# HELP ";
      out += family.name;
      out += ' ';
      out += family.help;
      out += '\n';
    }
    out += "# TYPE ";
    out += family.name;
    out += ' ';
    out += TypeName(family.type);
    out += '\n';
    for (const auto& metric : family.metric) {
      switch (family.type) {
        case MetricType::Counter:
          AppendSample(family, metric, metric.counter.value, out);
          break;
        case MetricType::Gauge:
          AppendSample(family, metric, metric.gauge.value, out);
          break;
        case MetricType::Untyped:
          AppendSample(family, metric, metric.untyped.value, out);
          break;
        case MetricType::Summary:
          AppendSummary(family, metric, out);
          break;
        case MetricType::Histogram:
          AppendHistogram(family, metric, out);
          break;
      }
    }
  }
}

}  // namespace trainscope
