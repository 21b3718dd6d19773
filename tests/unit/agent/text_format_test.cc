// The exposition writer must produce exactly what prometheus-cpp's
// TextSerializer produces, edge values included.
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <limits>

#include "exposition/family_builder.h"

namespace trainscope {
namespace {

TEST(TextFormatTest, IdenticalToTextSerializerOnEdgeValues) {
  std::vector<prometheus::MetricFamily> families;
  FamilyBuilder counters("test_edge_total",
                         "Help with a backslash \\ and a\nnewline.",
                         prometheus::MetricType::Counter);
  const double values[] = {0.0,
                           -0.0,
                           1.0,
                           0.1,
                           1e-9,
                           123456789012345678.0,
                           18446744073709551615.0,
                           std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::max()};
  int i = 0;
  for (double v : values) {
    counters.Add({{"case", std::to_string(i++)},
                  {"pod", "quote\" backslash\\ newline\n"}},
                 v);
  }
  counters.MoveInto(families);
  FamilyBuilder gauges("test_edge_ratio", "", prometheus::MetricType::Gauge);
  gauges.Add({}, 0.875).Add({{"a", ""}}, 2.5e-3);
  gauges.MoveInto(families);

  std::string ours;
  AppendTextFormat(families, ours);
  EXPECT_EQ(ours, prometheus::TextSerializer().Serialize(families));
}

// The agent exports counters and gauges only today; the writer still takes
// any family, so summaries, histograms (with and without a +Inf bucket),
// untyped samples and timestamps must come out as TextSerializer's too.
TEST(TextFormatTest, IdenticalToTextSerializerForEveryMetricType) {
  using prometheus::ClientMetric;
  using prometheus::MetricFamily;
  using prometheus::MetricType;
  std::vector<MetricFamily> families;

  ClientMetric summary;
  summary.label = {{"pod", "ctr-ps-0"}};
  summary.summary.sample_count = 7;
  summary.summary.sample_sum = 0.125;
  summary.summary.quantile = {{0.5, 0.01}, {0.99, 0.25}};
  families.push_back(
      {"test_latency_seconds", "A summary.", MetricType::Summary, {summary}});

  ClientMetric open_ended;
  open_ended.histogram.sample_count = 12;
  open_ended.histogram.sample_sum = 3.5;
  open_ended.histogram.bucket = {{4, 0.1}, {9, 1.0}};
  ClientMetric closed = open_ended;
  closed.label = {{"le_is_inf", "yes"}};
  closed.histogram.bucket.push_back(
      {12, std::numeric_limits<double>::infinity()});
  families.push_back({"test_size_bytes",
                      "A histogram.",
                      MetricType::Histogram,
                      {open_ended, closed}});

  ClientMetric untyped;
  untyped.untyped.value = 42;
  untyped.timestamp_ms = 1795300000000;
  families.push_back({"test_untyped", "", MetricType::Untyped, {untyped}});

  std::string ours;
  AppendTextFormat(families, ours);
  EXPECT_EQ(ours, prometheus::TextSerializer().Serialize(families));
}

TEST(TextFormatTest, EmptyInputGivesEmptyText) {
  std::string out;
  AppendTextFormat({}, out);
  EXPECT_EQ(out, prometheus::TextSerializer().Serialize({}));
}

}  // namespace
}  // namespace trainscope
