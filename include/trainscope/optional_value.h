#pragma once

#include <optional>

namespace trainscope {

// A value read as an integer (bytes, periods, counts), as the optional
// double that metrics and rates take; empty stays empty.
template <typename T>
std::optional<double> AsDouble(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

}  // namespace trainscope
