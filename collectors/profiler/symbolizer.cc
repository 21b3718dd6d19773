#include "profiler/symbolizer.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace trainscope::profiler {
namespace {

std::string HexAddress(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::optional<std::string> ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr size_t kMaxIdentities = 8192;

}  // namespace

Symbolizer::Symbolizer(Options options) : options_(std::move(options)) {}

bool Symbolizer::CaptureMaps(uint32_t pid) {
  auto text = ReadText(options_.proc / std::to_string(pid) / "maps");
  if (!text || text->empty()) return false;
  ProcessMaps process;
  process.maps = ParseProcMaps(*text);
  std::lock_guard lock(mu_);
  for (const MapEntry& map : process.maps) {
    if (!map.executable || !IsFileBacked(map) ||
        process.symbols.count(map.path)) {
      continue;
    }
    if (auto symbols = FileSymbols(pid, map)) {
      process.symbols[map.path] = std::move(symbols);
    }
  }
  maps_[pid] = std::move(process);
  return true;
}

void Symbolizer::ForgetMaps(uint32_t pid) {
  std::lock_guard lock(mu_);
  if (maps_.erase(pid)) DropUnmappedFiles();
}

void Symbolizer::DropUnmappedFiles() {
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto entry = cache_.find(*it);
    // Held by the cache alone: no captured process maps the file.
    if (entry->second.symbols.use_count() == 1) {
      stats_.bytes_cached -= entry->second.symbols->bytes();
      cache_.erase(entry);
      it = lru_.erase(it);
    } else {
      ++it;
    }
  }
}

std::shared_ptr<const ElfSymbols> Symbolizer::FileSymbols(uint32_t pid,
                                                          const MapEntry& map) {
  // The file as the process sees it: its own mount namespace's root.
  const std::filesystem::path path =
      options_.proc / std::to_string(pid) / "root" / map.path.substr(1);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return nullptr;
  const std::string identity =
      std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
      std::to_string(st.st_size) + ":" + std::to_string(st.st_mtime);
  if (auto known = key_by_identity_.find(identity);
      known != key_by_identity_.end()) {
    if (auto hit = cache_.find(known->second); hit != cache_.end()) {
      lru_.splice(lru_.begin(), lru_, hit->second.lru);
      ++stats_.cache_hits;
      return hit->second.symbols;
    }
  }
  Status error = Status::Ok();
  auto symbols = ElfSymbols::Load(path, &error);
  ++stats_.files_loaded;
  if (!symbols) {
    spdlog::debug("[profiler] symbols of {}: {}", map.path, error.message());
    return nullptr;
  }
  const std::string key =
      symbols->build_id().empty() ? "file:" + identity : symbols->build_id();
  if (key_by_identity_.size() >= kMaxIdentities) key_by_identity_.clear();
  key_by_identity_[identity] = key;
  if (auto hit = cache_.find(key); hit != cache_.end()) {
    // Same build id under another path or in another container.
    lru_.splice(lru_.begin(), lru_, hit->second.lru);
    return hit->second.symbols;
  }
  lru_.push_front(key);
  cache_[key] = {symbols, lru_.begin()};
  stats_.bytes_cached += symbols->bytes();
  while (cache_.size() > 1 && (cache_.size() > options_.max_files ||
                               stats_.bytes_cached > options_.max_bytes)) {
    auto victim = cache_.find(lru_.back());
    stats_.bytes_cached -= victim->second.symbols->bytes();
    cache_.erase(victim);
    lru_.pop_back();
  }
  return symbols;
}

Frame Symbolizer::UserFrame(uint32_t pid, const ProcessMaps& process,
                            uint64_t address, bool return_address) {
  Frame f;
  f.address = address;
  // A return address points after the call; the call is what ran.
  const uint64_t lookup = return_address && address > 0 ? address - 1 : address;
  const MapEntry* map = FindMapping(process.maps, lookup);
  if (!map) {
    f.module = "[unknown]";
    f.function = "[unknown] " + HexAddress(address);
    return f;
  }
  f.module = map->path.empty() ? "[anon]" : std::string(BaseName(map->path));
  const uint64_t file_offset = lookup - map->start + map->offset;
  uint64_t elf_address = file_offset;
  if (IsFileBacked(*map)) {
    auto pinned = process.symbols.find(map->path);
    auto symbols = pinned != process.symbols.end() ? pinned->second
                                                   : FileSymbols(pid, *map);
    if (symbols) {
      if (symbols->OffsetToAddress(file_offset, &elf_address)) {
        if (const char* name = symbols->Lookup(elf_address)) {
          f.function = Demangle(name);
          f.resolved = true;
          return f;
        }
      }
    }
  }
  if (map->path == "[vdso]") {
    // Every process maps the kernel's one vDSO image: ours resolves theirs.
    if (auto vdso = ElfSymbols::Vdso()) {
      uint64_t vaddr = 0;
      if (vdso->OffsetToAddress(file_offset, &vaddr)) {
        if (const char* name = vdso->Lookup(vaddr)) {
          f.function = name;
          f.resolved = true;
          return f;
        }
      }
    }
  }
  f.function = f.module + "+" + HexAddress(elf_address);
  return f;
}

std::vector<Frame> Symbolizer::SymbolizeUser(
    uint32_t pid, const std::vector<uint64_t>& addresses) {
  std::lock_guard lock(mu_);
  static const ProcessMaps kNoMaps;
  auto it = maps_.find(pid);
  const ProcessMaps& maps = it == maps_.end() ? kNoMaps : it->second;
  std::vector<Frame> frames;
  frames.reserve(addresses.size());
  for (size_t i = 0; i < addresses.size(); ++i) {
    frames.push_back(UserFrame(pid, maps, addresses[i], i > 0));
  }
  return frames;
}

void Symbolizer::EnsureKernelSymbols() {
  if (kernel_) return;
  auto text = ReadText(options_.proc / "kallsyms");
  kernel_ = KernelSymbols::Parse(text ? *text : std::string());
  if (kernel_->size() == 0) {
    spdlog::info(
        "[profiler] no kernel symbols in {}/kallsyms (kptr_restrict?): "
        "kernel frames stay addresses",
        options_.proc.string());
  }
}

std::vector<Frame> Symbolizer::SymbolizeKernel(
    const std::vector<uint64_t>& addresses) {
  std::lock_guard lock(mu_);
  EnsureKernelSymbols();
  std::vector<Frame> frames;
  frames.reserve(addresses.size());
  for (size_t i = 0; i < addresses.size(); ++i) {
    Frame f;
    f.kernel = true;
    f.address = addresses[i];
    const uint64_t lookup = i > 0 ? addresses[i] - 1 : addresses[i];
    if (const auto sym = kernel_->Lookup(lookup)) {
      f.function = std::string(sym->name);
      f.module = sym->module.empty() ? "[kernel]"
                                     : "[" + std::string(sym->module) + "]";
      f.resolved = true;
    } else {
      f.module = "[kernel]";
      f.function = "[kernel] " + HexAddress(addresses[i]);
    }
    frames.push_back(std::move(f));
  }
  return frames;
}

Symbolizer::Stats Symbolizer::stats() const {
  std::lock_guard lock(mu_);
  Stats s = stats_;
  s.files_cached = cache_.size();
  return s;
}

}  // namespace trainscope::profiler
