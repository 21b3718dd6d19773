#include "profiler/kernel_symbols.h"

#include <algorithm>
#include <charconv>

namespace trainscope::profiler {

KernelSymbols KernelSymbols::Parse(std::string_view text) {
  KernelSymbols table;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    // "ffffffff81000000 T _stext" or "... t name\t[module]"
    size_t s1 = line.find(' ');
    if (s1 == std::string_view::npos || s1 + 3 > line.size()) continue;
    const char type = line[s1 + 1];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    uint64_t address = 0;
    auto [end, ec] =
        std::from_chars(line.data(), line.data() + s1, address, 16);
    if (ec != std::errc() || address == 0) continue;
    std::string_view rest = line.substr(s1 + 3);
    Symbol sym;
    sym.address = address;
    size_t tab = rest.find('\t');
    sym.name = std::string(rest.substr(0, tab));
    if (tab != std::string_view::npos) {
      std::string_view module = rest.substr(tab + 1);
      if (module.size() > 2 && module.front() == '[') {
        module = module.substr(1, module.find(']') - 1);
      }
      sym.module = std::string(module);
    }
    table.symbols_.push_back(std::move(sym));
  }
  std::sort(
      table.symbols_.begin(), table.symbols_.end(),
      [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
  return table;
}

const KernelSymbols::Symbol* KernelSymbols::Lookup(uint64_t address) const {
  auto it = std::upper_bound(
      symbols_.begin(), symbols_.end(), address,
      [](uint64_t addr, const Symbol& s) { return addr < s.address; });
  if (it == symbols_.begin()) return nullptr;
  return &*std::prev(it);
}

}  // namespace trainscope::profiler
