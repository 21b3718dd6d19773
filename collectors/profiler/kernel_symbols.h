#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainscope::profiler {

// Kernel text symbols from /proc/kallsyms, for kernel stack frames.
class KernelSymbols {
 public:
  // Parses kallsyms text (pure). Addresses of 0 (kptr_restrict hides them)
  // leave the table empty: kernel frames then show as [kernel] addresses.
  static KernelSymbols Parse(std::string_view text);
  // The function containing `address` and its module ("" for vmlinux,
  // "nf_tables" for [nf_tables]); null when unknown.
  struct Symbol {
    uint64_t address = 0;
    std::string name;
    std::string module;
  };
  const Symbol* Lookup(uint64_t address) const;
  size_t size() const { return symbols_.size(); }

 private:
  std::vector<Symbol> symbols_;  // sorted by address
};

}  // namespace trainscope::profiler
