#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "detector_cases.h"

namespace trainscope::diagnosis::testing {

// Compares a kind's findings to the table row: same pods, same levels.
inline void ExpectFindings(std::string_view kind, const DetectorCase& c,
                           const DiagnosisSettings& s = {}) {
  auto found = FindingsOf(kind, c.window(), s);
  std::vector<std::string> got, want;
  for (const auto& f : found) {
    got.push_back(f.diagnosis.pod + ":" + DescribeLevel(f.level));
    EXPECT_EQ(f.diagnosis.kind, kind);
    EXPECT_FALSE(f.diagnosis.summary.empty());
    EXPECT_FALSE(f.diagnosis.recommendations.empty());
    EXPECT_FALSE(f.diagnosis.evidence.empty());
  }
  for (const auto& e : c.expected) {
    want.push_back(e.pod + ":" + DescribeLevel(e.level));
  }
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want) << c.name;
}

}  // namespace trainscope::diagnosis::testing
