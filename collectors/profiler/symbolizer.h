#pragma once

#include <cstdint>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/elf_symbols.h"
#include "profiler/kernel_symbols.h"
#include "profiler/proc_maps.h"
#include "profiler/profile.h"

namespace trainscope::profiler {

// Turns raw stack addresses into frames. Native frames come from the ELF
// symbols of the mapped files (opened through /proc/<pid>/root so a
// container's own libraries are read), cached by build id (or path, size
// and mtime when a file has none) with a bound on files and bytes, while a
// captured process maps them; kernel frames from /proc/kallsyms.
// Thread-safe.
class Symbolizer {
 public:
  struct Options {
    std::filesystem::path proc = "/proc";
    size_t max_files = 256;          // ELF files kept
    size_t max_bytes = 32ull << 20;  // their symbol tables, roughly
  };
  explicit Symbolizer(Options options);

  // Reads /proc/<pid>/maps now and the symbols of its executable files; later
  // Symbolize calls use these, so a process that exits after this still
  // resolves.
  bool CaptureMaps(uint32_t pid);
  // Drops the process's maps, and the symbols of files that no captured
  // process maps any more: memory follows the pods that run (a node's
  // departed pods leave nothing), at the price of reading a file again
  // when a process that maps it is captured later.
  void ForgetMaps(uint32_t pid);

  std::vector<Frame> SymbolizeUser(uint32_t pid,
                                   const std::vector<uint64_t>& addresses);
  std::vector<Frame> SymbolizeKernel(const std::vector<uint64_t>& addresses);

  struct Stats {
    uint64_t files_loaded = 0;  // ELF files read (cache misses)
    uint64_t cache_hits = 0;
    size_t files_cached = 0;
    size_t bytes_cached = 0;
  };
  Stats stats() const;

 private:
  // A process as captured: its maps and the symbols of its files (held
  // here, so cache eviction cannot drop them while a profile needs them).
  struct ProcessMaps {
    std::vector<MapEntry> maps;
    std::map<std::string, std::shared_ptr<const ElfSymbols>> symbols;
  };
  Frame UserFrame(uint32_t pid, const ProcessMaps& process, uint64_t address,
                  bool return_address);
  std::shared_ptr<const ElfSymbols> FileSymbols(uint32_t pid,
                                                const MapEntry& map);
  void EnsureKernelSymbols();
  void DropUnmappedFiles();  // with mu_ held

  const Options options_;
  mutable std::mutex mu_;
  std::map<uint32_t, ProcessMaps> maps_;
  // Cache key -> symbols; LRU order in lru_ (front = most recent).
  struct CacheEntry {
    std::shared_ptr<const ElfSymbols> symbols;
    std::list<std::string>::iterator lru;
  };
  std::unordered_map<std::string, CacheEntry> cache_;
  std::list<std::string> lru_;
  // (path, size, mtime) -> cache key, so a file is opened once per process
  // lifetime of the cache, not once per frame.
  std::map<std::string, std::string> key_by_identity_;
  std::optional<KernelSymbols> kernel_;
  Stats stats_;
};

}  // namespace trainscope::profiler
