#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace trainscope {

// A sample value as the Prometheus HTTP API writes it (a JSON string): a
// decimal float with an optional sign, fraction and exponent ("12", "0.5",
// "1.5e-07", "-3E+21"), or exactly "NaN", "+Inf", "Inf" or "-Inf". Anything
// else (hex, "inf", "1,5", spaces, trailing junk, an out-of-range exponent)
// is nullopt: strtod's leniency would turn junk into numbers.
std::optional<double> ParsePrometheusValue(std::string_view text);

// A decimal number without sign ("0", "60", "2.5", "1e3"); no hex, no
// leading or trailing junk, finite.
std::optional<double> ParseDecimal(std::string_view text);

// A decimal whole number without sign or leading zeros ("0", "65536"): what
// CLI11 would otherwise read as octal ("010"), hex ("0x10") or wrap around
// ("-1" as 2^64 - 1).
std::optional<uint64_t> ParseWholeNumber(std::string_view text);

}  // namespace trainscope
