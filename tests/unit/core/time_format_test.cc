#include "trainscope/time_format.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

namespace trainscope {
namespace {

struct ParseCase {
  std::string text;
  std::optional<double> want;
};

TEST(ParseRfc3339Test, ReadsWhatTheApiWritesAndRefusesTheRest) {
  const ParseCase cases[] = {
      {"1970-01-01T00:00:00Z", 0.0},
      {"2026-11-28T10:15:03Z", 1795860903.0},
      {"2026-11-28T10:15:03.250Z", 1795860903.25},
      {"2026-11-28T10:15:03.123456789Z", 1795860903.123456789},
      {"2026-11-28T12:15:03+02:00", 1795860903.0},
      {"2026-11-28T05:15:03-05:00", 1795860903.0},
      {"2024-02-29T00:00:00Z", 1709164800.0},  // a leap day
      {"2026-11-28t10:15:03z", 1795860903.0},  // RFC 3339 allows lower case
      {"", std::nullopt},
      {"2026-11-28", std::nullopt},
      {"2026-11-28T10:15:03", std::nullopt},  // no offset: ambiguous
      {"2026-11-28T10:15:03.Z", std::nullopt},
      {"2026-02-30T00:00:00Z", std::nullopt},
      {"2026-13-01T00:00:00Z", std::nullopt},
      {"2026-11-28T24:00:00Z", std::nullopt},
      {"2026-11-28T10:15:03Zjunk", std::nullopt},
      {"2026-11-28T10:15:03+0200", std::nullopt},
      {"2026-1l-28T10:15:03Z", std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto got = ParseRfc3339(c.text);
    ASSERT_EQ(got.has_value(), c.want.has_value());
    if (c.want) {
      EXPECT_NEAR(*got, *c.want, 1e-6);
    }
  }
}

TEST(ParseRfc3339Test, ReadsBackWhatRfc3339Writes) {
  const auto t =
      std::chrono::system_clock::time_point(std::chrono::seconds(1795860903));
  EXPECT_EQ(ParseRfc3339(Rfc3339(t)), 1795860903.0);
}

}  // namespace
}  // namespace trainscope
