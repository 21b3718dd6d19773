#pragma once

// Cuts a fuzzer's input into the pieces a target needs. Every accessor is
// total: on an exhausted input it returns zero or an empty view, so a target
// never reads past the data it was given.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace trainscope::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}

  // One byte as a small number (0 when exhausted).
  uint8_t Byte() {
    if (rest_.empty()) return 0;
    const auto b = static_cast<uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    return b;
  }
  // Up to the next '\n' (not included), or everything left.
  std::string_view Line() {
    const size_t end = rest_.find('\n');
    std::string_view line = rest_.substr(0, end);
    rest_.remove_prefix(end == std::string_view::npos ? rest_.size() : end + 1);
    return line;
  }
  std::string_view Rest() {
    std::string_view all = rest_;
    rest_ = {};
    return all;
  }
  bool empty() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

}  // namespace trainscope::fuzz
