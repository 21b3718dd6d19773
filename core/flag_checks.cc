#include "trainscope/flag_checks.h"

#include <cstdio>

#include "trainscope/strict_number.h"
#include "trainscope/terminal_text.h"

namespace trainscope {
namespace {

// The user's text as a message quotes it: short, and never a terminal
// escape sequence.
std::string Quoted(const std::string& text) {
  return "'" + TerminalSafe(text, 40) + "'";
}

CLI::Validator Check(std::string expected, std::string description,
                     std::function<bool(const std::string&)> accepts) {
  return CLI::Validator(
      [expected = std::move(expected),
       accepts = std::move(accepts)](std::string& text) -> std::string {
        if (accepts(text)) return {};
        return "expected " + expected + ", got " + Quoted(text);
      },
      std::move(description), "");
}

}  // namespace

std::string NumberText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

CLI::Validator NumberIn(double above, double at_most, bool inclusive) {
  const std::string range =
      inclusive
          ? "a number from " + NumberText(above) + " to " + NumberText(at_most)
          : "a number greater than " + NumberText(above) + " and at most " +
                NumberText(at_most);
  return Check(range,
               (inclusive ? "[" : "(") + NumberText(above) + ", " +
                   NumberText(at_most) + "]",
               [=](const std::string& text) {
                 const auto value = ParseDecimal(text);
                 return value &&
                        (inclusive ? *value >= above : *value > above) &&
                        *value <= at_most;
               });
}

CLI::Validator ZeroOrNumberIn(double min, double max) {
  return Check(
      "0 (off) or a number from " + NumberText(min) + " to " + NumberText(max),
      "0 or [" + NumberText(min) + ", " + NumberText(max) + "]",
      [=](const std::string& text) {
        const auto value = ParseDecimal(text);
        return value && (*value == 0 || (*value >= min && *value <= max));
      });
}

CLI::Validator WholeNumberIn(uint64_t min, uint64_t max) {
  return Check("a whole number from " + std::to_string(min) + " to " +
                   std::to_string(max),
               "[" + std::to_string(min) + ", " + std::to_string(max) + "]",
               [=](const std::string& text) {
                 const auto value = ParseWholeNumber(text);
                 return value && *value >= min && *value <= max;
               });
}

std::vector<std::string> SplitCommaList(std::string_view text, bool trim) {
  std::vector<std::string> out;
  for (std::string_view rest = text; !rest.empty();) {
    const size_t comma = rest.find(',');
    std::string item(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view()
                                           : rest.substr(comma + 1);
    if (trim) std::erase_if(item, [](char c) { return c == ' '; });
    if (!item.empty()) out.push_back(std::move(item));
  }
  return out;
}

}  // namespace trainscope
