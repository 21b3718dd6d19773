#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainscope {

// A typed mode and the names its flag and its metric labels spell it with,
// defined once per enum as a table: {{Mode::kA, "a"}, {Mode::kB, "b"}}.
template <typename E, std::size_t N>
using EnumNameTable = std::array<std::pair<E, std::string_view>, N>;

template <typename E, std::size_t N>
std::optional<E> EnumFromName(const EnumNameTable<E, N>& table,
                              std::string_view name) {
  for (const auto& [value, spelled] : table)
    if (spelled == name) return value;
  return std::nullopt;
}

template <typename E, std::size_t N>
std::string_view NameOfEnum(const EnumNameTable<E, N>& table, E value) {
  for (const auto& [v, spelled] : table)
    if (v == value) return spelled;
  return "unknown";
}

// Every name, in table order (a flag's allowed values).
template <typename E, std::size_t N>
std::vector<std::string> EnumNames(const EnumNameTable<E, N>& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.second);
  return out;
}

}  // namespace trainscope
