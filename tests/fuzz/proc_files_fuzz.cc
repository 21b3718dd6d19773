// /proc and /sys files the agent reads: /proc/stat, /proc/meminfo, a NIC's
// speed, /proc/<pid>/maps (the profiler) and /proc/<pid>/cgroup (the GPU
// collector's process-to-pod lookup).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "gpu/pid_pod.h"
#include "node/node_parse.h"
#include "profiler/proc_maps.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainscope;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseProcStat(text, 100);
  (void)ParseMemInfo(text);
  (void)ParseLinkSpeedBytesPerSecond(text);
  (void)ParsePidCgroup(text);
  const auto maps = profiler::ParseProcMaps(text);
  // The kernel writes mappings sorted and disjoint, which FindMapping needs.
  const bool kernel_order =
      std::all_of(maps.begin(), maps.end(),
                  [](const auto& m) { return m.start < m.end; }) &&
      std::adjacent_find(maps.begin(), maps.end(),
                         [](const auto& a, const auto& b) {
                           return a.end > b.start;
                         }) == maps.end();
  for (const auto& map : maps) {
    // A mapping found for an address must hold it.
    for (uint64_t address : {map.start, map.end - 1, map.end}) {
      const auto* found = profiler::FindMapping(maps, address);
      if (kernel_order && found &&
          (address < found->start || address >= found->end)) {
        std::abort();
      }
    }
    (void)profiler::IsFileBacked(map);
    (void)profiler::BaseName(map.path);
  }
  return 0;
}
