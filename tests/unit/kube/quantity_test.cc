#include "kube/quantity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

namespace trainscope {
namespace {

struct QuantityCase {
  std::string text;
  std::optional<double> want;
};

TEST(ParseQuantityTest, Table) {
  const QuantityCase cases[] = {
      {"500m", 0.5},
      {"2", 2},
      {"1.5", 1.5},
      {"100u", 1e-4},
      {"250n", 2.5e-7},
      {"512Mi", 512.0 * 1024 * 1024},
      {"1Gi", 1024.0 * 1024 * 1024},
      {"64Ki", 65536},
      {"1G", 1e9},
      {"1.5G", 1.5e9},
      {"2k", 2000},
      {"3M", 3e6},
      {"1T", 1e12},
      {"1e9", 1e9},
      {"5E3", 5e3},
      {"1e-3", 1e-3},
      {"128974848", 128974848},
      {"0", 0},
      {"+1", 1},
      {"", std::nullopt},
      {"abc", std::nullopt},
      {"1Xi", std::nullopt},
      {"12 Mi", std::nullopt},
      {"-1", std::nullopt},
      {"1e", std::nullopt},
      {".", std::nullopt},
      {"1.2.3", std::nullopt},
      {"Mi", std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("quantity \"" + c.text + "\"");
    auto got = ParseQuantity(c.text);
    ASSERT_EQ(got.has_value(), c.want.has_value());
    if (c.want) {
      EXPECT_NEAR(*got, *c.want, std::abs(*c.want) * 1e-12);
    }
  }
}

struct BandwidthCase {
  const char* text;
  std::optional<double> bytes_per_second;
};

// Found by fuzz.quantity: the exponent went through std::stod, which threw
// std::out_of_range past double's range, out of discovery or the diagnosis
// (a pod annotated kubernetes.io/ingress-bandwidth: 1e999...).
TEST(ParseQuantityTest, ExponentBeyondDoubleIsRefusedNotThrown) {
  const std::string nines(400, '9');
  EXPECT_EQ(ParseQuantity("1e" + nines), std::nullopt);
  EXPECT_EQ(ParseQuantity("1e-" + nines), 0.0);
  EXPECT_EQ(ParseBandwidthAnnotation("1e" + nines), std::nullopt);
  EXPECT_EQ(ParseBandwidthAnnotation("1e-" + nines), std::nullopt);
}

class BandwidthTest : public ::testing::TestWithParam<BandwidthCase> {};

TEST_P(BandwidthTest, Parses) {
  auto got = ParseBandwidthAnnotation(GetParam().text);
  ASSERT_EQ(got.has_value(), GetParam().bytes_per_second.has_value())
      << GetParam().text;
  if (got) {
    EXPECT_DOUBLE_EQ(*got, *GetParam().bytes_per_second);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BandwidthTest,
    ::testing::Values(
        BandwidthCase{"10M", 1.25e6}, BandwidthCase{"1G", 1.25e8},
        BandwidthCase{"100k", 12500}, BandwidthCase{"1Mi", 131072},
        BandwidthCase{" 8000 ", 1000}, BandwidthCase{"2.5M", 312500},
        BandwidthCase{"", std::nullopt}, BandwidthCase{"fast", std::nullopt},
        BandwidthCase{"10X", std::nullopt}, BandwidthCase{"0", std::nullopt},
        BandwidthCase{"1.2.3M", std::nullopt},
        BandwidthCase{"-10M", std::nullopt}, BandwidthCase{"1e7", 1.25e6},
        // The kubelet's bounds: 1 kbit/s to 1 Pbit/s.
        BandwidthCase{"1k", 125}, BandwidthCase{"0.5k", std::nullopt},
        BandwidthCase{"1P", 1.25e14}, BandwidthCase{"2P", std::nullopt},
        BandwidthCase{"1Pi", std::nullopt},
        // Found by fuzz.quantity: positive, but 0 bytes/s once divided.
        BandwidthCase{"2e-323", std::nullopt}));

}  // namespace
}  // namespace trainscope
