#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainscope {

// CLI11 checks for number flags, shared by the agent and the CLI. They read
// the flag's text strictly (trainscope/strict_number.h) and keep it in a
// finite range: NaN, inf, "-1", "0x10", "010", 1e308 and "" are refused
// with a message naming the range and quoting the text (CLI11's own Range
// and PositiveNumber let NaN through, read "-1" into an unsigned flag as
// 2^64 - 1 and "010" as octal 8).

// A number greater than `above` (or equal to it when `inclusive`) and at
// most `at_most`.
CLI::Validator NumberIn(double above, double at_most, bool inclusive = false);
// 0 ("off"), or a number from `min` to `max`.
CLI::Validator ZeroOrNumberIn(double min, double max);
// A whole number from `min` to `max`.
CLI::Validator WholeNumberIn(uint64_t min, uint64_t max);

// A comma-separated list flag: "a, b,,c" -> {"a", "b", "c"}; spaces are
// dropped when `trim`, empty items always.
std::vector<std::string> SplitCommaList(std::string_view text, bool trim);

// `value` as the help and the messages show a number ("60", "0.5", "1e+07";
// never the 300 digits of a double's maximum).
std::string NumberText(double value);

}  // namespace trainscope
