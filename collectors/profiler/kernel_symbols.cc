#include "profiler/kernel_symbols.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>

namespace trainscope::profiler {

KernelSymbols KernelSymbols::Parse(std::string_view text) {
  KernelSymbols table;
  table.modules_.push_back("");
  std::map<std::string, uint16_t, std::less<>> module_index = {{"", 0}};
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
    size_t tab = rest.find('\t');
    std::string_view name = rest.substr(0, tab);
    std::string_view module;
    if (tab != std::string_view::npos) {
      module = rest.substr(tab + 1);
      if (module.size() > 2 && module.front() == '[') {
        module = module.substr(1, module.find(']') - 1);
      }
    }
    auto it = module_index.find(module);
    if (it == module_index.end()) {
      if (table.modules_.size() >= 0xffff) continue;
      it = module_index
               .emplace(std::string(module),
                        static_cast<uint16_t>(table.modules_.size()))
               .first;
      table.modules_.emplace_back(module);
    }
    table.entries_.push_back(
        {address, static_cast<uint32_t>(table.pool_.size()), it->second});
    table.pool_.append(name);
    table.pool_.push_back('\0');
  }
  std::sort(
      table.entries_.begin(), table.entries_.end(),
      [](const Entry& a, const Entry& b) { return a.address < b.address; });
  table.entries_.shrink_to_fit();
  table.pool_.shrink_to_fit();
  return table;
}

std::optional<KernelSymbols::Symbol> KernelSymbols::Lookup(
    uint64_t address) const {
  auto it = std::upper_bound(
      entries_.begin(), entries_.end(), address,
      [](uint64_t addr, const Entry& e) { return addr < e.address; });
  if (it == entries_.begin()) return std::nullopt;
  --it;
  const char* name = pool_.data() + it->name;
  return Symbol{it->address, std::string_view(name, std::strlen(name)),
                modules_[it->module]};
}

}  // namespace trainscope::profiler
