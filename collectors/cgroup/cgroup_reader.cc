#include "cgroup/cgroup_reader.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "cgroup/cgroup_parse.h"
#include "spdlog/spdlog.h"
#include "trainscope/file_util.h"

namespace trainscope {
namespace fs = std::filesystem;
namespace {

std::optional<uint64_t> Key(const std::optional<std::string>& content,
                            std::string_view key) {
  if (!content) return std::nullopt;
  return cgroup::FlatKeyedValue(*content, key);
}

template <typename T, typename Parser>
std::optional<T> Parse(const std::optional<std::string>& content,
                       Parser parser) {
  if (!content) return std::nullopt;
  return parser(*content);
}

// A flat-keyed file read at most once, and only when a key is asked for:
// the v1 copies are only needed where v2 lacks a value.
template <typename ReadFn>
auto LazyKeys(ReadFn read) {
  return [read, content = std::optional<std::optional<std::string>>()](
             std::string_view key) mutable {
    if (!content) content = read();
    return Key(*content, key);
  };
}

}  // namespace

CgroupDir::CgroupDir(const CgroupHierarchies& hierarchies,
                     std::string relative_path)
    : hierarchies_(hierarchies), relative_path_(std::move(relative_path)) {}

int CgroupDir::Dir(const fs::path& hierarchy) {
  auto [it, inserted] = dirs_.try_emplace(hierarchy);
  if (inserted) {
    const fs::path dir = hierarchy / relative_path_;
    it->second.reset(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  return it->second.get();
}

bool CgroupDir::Exists() {
  if (hierarchies_.unified && Dir(*hierarchies_.unified) >= 0) return true;
  for (const auto& [controller, root] : hierarchies_.v1) {
    if (Dir(root) >= 0) return true;
  }
  return false;
}

std::optional<std::string> CgroupDir::Read(const fs::path& hierarchy,
                                           const char* file) {
  const int dir = Dir(hierarchy);
  if (dir < 0) return std::nullopt;
  auto content = ReadSmallFileAt(dir, file);
  // Absent files are normal (v2 files on a hybrid host, PSI on old kernels);
  // only files that exist but cannot be read are worth a log line.
  if (!content && errno != ENOENT) {
    spdlog::debug("[cgroup] cannot read {}: {}",
                  (hierarchy / relative_path_ / file).string(),
                  std::strerror(errno));
  }
  return content;
}

std::optional<std::string> CgroupDir::V2(const char* file,
                                         const char* controller) {
  if (!hierarchies_.unified) return std::nullopt;
  if (controller && !hierarchies_.unified_controllers.contains(controller)) {
    return std::nullopt;
  }
  return Read(*hierarchies_.unified, file);
}

std::optional<std::string> CgroupDir::V1(const char* controller,
                                         const char* file) {
  const auto it = hierarchies_.v1.find(controller);
  if (it == hierarchies_.v1.end()) return std::nullopt;
  return Read(it->second, file);
}

void CgroupDir::ReadCpu(CpuSample& cpu) {
  // cpu.stat is a core v2 file: usage_usec always, the throttling keys only
  // where the cpu controller is enabled. v1's copy is read only when needed.
  const auto v2_stat = V2("cpu.stat", nullptr);
  auto v1_key = LazyKeys([this] { return V1("cpu", "cpu.stat"); });

  if (const auto usec = Key(v2_stat, "usage_usec")) {
    cpu.usage_seconds = static_cast<double>(*usec) / 1e6;
  } else if (const auto ns = Parse<uint64_t>(V1("cpuacct", "cpuacct.usage"),
                                             cgroup::ParseUint)) {
    cpu.usage_seconds = static_cast<double>(*ns) / 1e9;
  }

  cpu.periods = Key(v2_stat, "nr_periods");
  if (!cpu.periods) cpu.periods = v1_key("nr_periods");
  cpu.throttled_periods = Key(v2_stat, "nr_throttled");
  if (!cpu.throttled_periods) cpu.throttled_periods = v1_key("nr_throttled");
  if (const auto usec = Key(v2_stat, "throttled_usec")) {
    cpu.throttled_seconds = static_cast<double>(*usec) / 1e6;
  } else if (const auto ns = v1_key("throttled_time")) {
    cpu.throttled_seconds = static_cast<double>(*ns) / 1e9;
  }

  auto bandwidth =
      Parse<cgroup::CpuBandwidth>(V2("cpu.max", "cpu"), cgroup::ParseCpuMax);
  if (!bandwidth) {
    const auto quota = V1("cpu", "cpu.cfs_quota_us");
    const auto period = V1("cpu", "cpu.cfs_period_us");
    if (quota && period) bandwidth = cgroup::ParseCfsBandwidth(*quota, *period);
  }
  if (bandwidth) cpu.limit_cores = bandwidth->cores();
}

void CgroupDir::ReadMemory(MemorySample& mem) {
  // inactive_file must come from the same version as the usage it is
  // subtracted from. v1 total_* keys include descendants; the plain keys are
  // this cgroup alone, which is nearly nothing for a pod cgroup.
  const auto v2_stat = V2("memory.stat", "memory");
  auto v1_key = LazyKeys([this] { return V1("memory", "memory.stat"); });
  std::optional<uint64_t> inactive_file;
  mem.usage_bytes =
      Parse<uint64_t>(V2("memory.current", "memory"), cgroup::ParseUint);
  if (mem.usage_bytes) {
    inactive_file = Key(v2_stat, "inactive_file");
  } else {
    mem.usage_bytes = Parse<uint64_t>(V1("memory", "memory.usage_in_bytes"),
                                      cgroup::ParseUint);
    inactive_file = v1_key("total_inactive_file");
  }
  mem.rss_bytes = Key(v2_stat, "anon");
  if (!mem.rss_bytes) mem.rss_bytes = v1_key("total_rss");
  if (mem.usage_bytes) {
    // As cAdvisor: without inactive_file the working set is the usage.
    const uint64_t inactive = inactive_file.value_or(0);
    mem.working_set_bytes =
        *mem.usage_bytes > inactive ? *mem.usage_bytes - inactive : 0;
  }

  auto limit = Parse<cgroup::MemoryLimit>(V2("memory.max", "memory"),
                                          cgroup::ParseMemoryMax);
  if (!limit) {
    limit = Parse<cgroup::MemoryLimit>(V1("memory", "memory.limit_in_bytes"),
                                       cgroup::ParseMemoryLimitInBytes);
  }
  if (limit) mem.limit_bytes = limit->bytes;

  // Kernels before 4.13 have no oom_kill counter in either file. The value is
  // then left empty rather than replaced by memory.failcnt, which counts
  // every charge that hit the limit (reclaim included), not OOM kills.
  mem.oom_events = Key(V2("memory.events", "memory"), "oom_kill");
  if (!mem.oom_events) {
    mem.oom_events = Key(V1("memory", "memory.oom_control"), "oom_kill");
  }
}

void CgroupDir::ReadIo(IoSample& io) {
  auto bytes = Parse<cgroup::IoBytes>(V2("io.stat", "io"), cgroup::ParseIoStat);
  // Pod cgroups hold no processes themselves, so the non-recursive v1 file
  // is only a fallback for kernels without the recursive one.
  if (!bytes) {
    bytes = Parse<cgroup::IoBytes>(
        V1("blkio", "blkio.throttle.io_service_bytes_recursive"),
        cgroup::ParseBlkioServiceBytes);
  }
  if (!bytes) {
    bytes =
        Parse<cgroup::IoBytes>(V1("blkio", "blkio.throttle.io_service_bytes"),
                               cgroup::ParseBlkioServiceBytes);
  }
  if (!bytes) return;
  io.read_bytes = bytes->read;
  io.write_bytes = bytes->write;
}

CgroupSample CgroupDir::Sample() {
  CgroupSample out;
  ReadCpu(out.cpu);
  ReadMemory(out.memory);
  ReadIo(out.io);
  for (auto [file, target] :
       {std::pair{"cpu.pressure", &out.cpu_pressure},
        std::pair{"memory.pressure", &out.memory_pressure},
        std::pair{"io.pressure", &out.io_pressure}}) {
    if (auto psi =
            Parse<PressureSample>(V2(file, nullptr), cgroup::ParsePressure)) {
      *target = *psi;
    }
  }
  return out;
}

std::vector<int> CgroupDir::Pids() {
  std::vector<const fs::path*> roots;
  if (hierarchies_.unified) roots.push_back(&*hierarchies_.unified);
  for (const auto& [controller, root] : hierarchies_.v1) roots.push_back(&root);
  for (const fs::path* root : roots) {
    const auto content = Read(*root, "cgroup.procs");
    if (!content) continue;
    auto pids = cgroup::ParseCgroupProcs(*content);
    if (pids && !pids->empty()) return std::move(*pids);
  }
  return {};
}

}  // namespace trainscope
