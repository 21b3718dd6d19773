#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainscope::profiler {

// Kernel text symbols from /proc/kallsyms, for kernel stack frames. About
// 120,000 on a current kernel: kept as 16-byte entries into one name pool
// (about 4 MiB in all) rather than a string each.
class KernelSymbols {
 public:
  // Parses kallsyms text (pure). Addresses of 0 (kptr_restrict, or no
  // CAP_SYSLOG) leave the table empty: kernel frames then stay addresses.
  static KernelSymbols Parse(std::string_view text);

  struct Symbol {
    uint64_t address = 0;
    std::string_view name;
    std::string_view module;  // "" for vmlinux, "nf_tables" for [nf_tables]
  };
  // The function containing `address`; nullopt when below every symbol.
  std::optional<Symbol> Lookup(uint64_t address) const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t address;
    uint32_t name;    // offset into pool_
    uint16_t module;  // index into modules_
  };
  std::vector<Entry> entries_;  // sorted by address
  std::string pool_;            // names, each followed by '\0'
  std::vector<std::string> modules_;
};

}  // namespace trainscope::profiler
