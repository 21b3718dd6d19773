#include "cgroup/cgroup_reader.h"

#include <system_error>

#include "cgroup/cgroup_parse.h"
#include "spdlog/spdlog.h"
#include "trainscope/file_util.h"

namespace trainscope {
namespace fs = std::filesystem;
namespace {

// Absent files are normal (v2 files on a hybrid host, PSI on old kernels);
// only files that exist but cannot be read are worth a log line.
std::optional<std::string> ReadCgroupFile(const fs::path& path) {
  auto content = ReadSmallFile(path);
  std::error_code ec;
  if (!content && fs::exists(path, ec)) {
    spdlog::debug("[cgroup] cannot read {}", path.string());
  }
  return content;
}

// The interface files of one cgroup in each hierarchy it lives in.
class CgroupFiles {
 public:
  CgroupFiles(const CgroupHierarchies& h, const std::string& relative_path)
      : h_(h), rel_(relative_path) {}

  std::optional<std::string> V2(const char* file) const {
    if (!h_.unified) return std::nullopt;
    return ReadCgroupFile(*h_.unified / rel_ / file);
  }

  std::optional<std::string> V1(const char* controller,
                                const char* file) const {
    const auto it = h_.v1.find(controller);
    if (it == h_.v1.end()) return std::nullopt;
    return ReadCgroupFile(it->second / rel_ / file);
  }

 private:
  const CgroupHierarchies& h_;
  const std::string& rel_;
};

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

void ReadCpu(const CgroupFiles& f, CpuSample& cpu) {
  const auto v2_stat = f.V2("cpu.stat");
  const auto v1_stat = f.V1("cpu", "cpu.stat");

  if (const auto usec = Key(v2_stat, "usage_usec")) {
    cpu.usage_seconds = static_cast<double>(*usec) / 1e6;
  } else if (const auto ns = Parse<uint64_t>(f.V1("cpuacct", "cpuacct.usage"),
                                             cgroup::ParseUint)) {
    cpu.usage_seconds = static_cast<double>(*ns) / 1e9;
  }

  cpu.periods = Key(v2_stat, "nr_periods");
  if (!cpu.periods) cpu.periods = Key(v1_stat, "nr_periods");
  cpu.throttled_periods = Key(v2_stat, "nr_throttled");
  if (!cpu.throttled_periods)
    cpu.throttled_periods = Key(v1_stat, "nr_throttled");
  if (const auto usec = Key(v2_stat, "throttled_usec")) {
    cpu.throttled_seconds = static_cast<double>(*usec) / 1e6;
  } else if (const auto ns = Key(v1_stat, "throttled_time")) {
    cpu.throttled_seconds = static_cast<double>(*ns) / 1e9;
  }

  auto bandwidth =
      Parse<cgroup::CpuBandwidth>(f.V2("cpu.max"), cgroup::ParseCpuMax);
  if (!bandwidth) {
    const auto quota = f.V1("cpu", "cpu.cfs_quota_us");
    const auto period = f.V1("cpu", "cpu.cfs_period_us");
    if (quota && period) bandwidth = cgroup::ParseCfsBandwidth(*quota, *period);
  }
  if (bandwidth) cpu.limit_cores = bandwidth->cores();
}

void ReadMemory(const CgroupFiles& f, MemorySample& mem) {
  const auto v2_stat = f.V2("memory.stat");
  const auto v1_stat = f.V1("memory", "memory.stat");
  // inactive_file must come from the same version as the usage it is
  // subtracted from. v1 total_* keys include descendants; the plain keys are
  // this cgroup alone, which is nearly nothing for a pod cgroup.
  std::optional<uint64_t> inactive_file;
  mem.usage_bytes = Parse<uint64_t>(f.V2("memory.current"), cgroup::ParseUint);
  if (mem.usage_bytes) {
    inactive_file = Key(v2_stat, "inactive_file");
  } else {
    mem.usage_bytes = Parse<uint64_t>(f.V1("memory", "memory.usage_in_bytes"),
                                      cgroup::ParseUint);
    inactive_file = Key(v1_stat, "total_inactive_file");
  }
  if (mem.usage_bytes) {
    // As cAdvisor: without inactive_file the working set is the usage.
    const uint64_t inactive = inactive_file.value_or(0);
    mem.working_set_bytes =
        *mem.usage_bytes > inactive ? *mem.usage_bytes - inactive : 0;
  }
  mem.rss_bytes = Key(v2_stat, "anon");
  if (!mem.rss_bytes) mem.rss_bytes = Key(v1_stat, "total_rss");

  auto limit =
      Parse<cgroup::MemoryLimit>(f.V2("memory.max"), cgroup::ParseMemoryMax);
  if (!limit) {
    limit = Parse<cgroup::MemoryLimit>(f.V1("memory", "memory.limit_in_bytes"),
                                       cgroup::ParseMemoryLimitInBytes);
  }
  if (limit) mem.limit_bytes = limit->bytes;

  // Kernels before 4.13 have no oom_kill counter in either file. The value is
  // then left empty rather than replaced by memory.failcnt, which counts
  // every charge that hit the limit (reclaim included), not OOM kills.
  mem.oom_events = Key(f.V2("memory.events"), "oom_kill");
  if (!mem.oom_events) {
    mem.oom_events = Key(f.V1("memory", "memory.oom_control"), "oom_kill");
  }
}

void ReadIo(const CgroupFiles& f, IoSample& io) {
  auto bytes = Parse<cgroup::IoBytes>(f.V2("io.stat"), cgroup::ParseIoStat);
  // Pod cgroups hold no processes themselves, so the non-recursive v1 file
  // is only a fallback for kernels without the recursive one.
  if (!bytes) {
    bytes = Parse<cgroup::IoBytes>(
        f.V1("blkio", "blkio.throttle.io_service_bytes_recursive"),
        cgroup::ParseBlkioServiceBytes);
  }
  if (!bytes) {
    bytes =
        Parse<cgroup::IoBytes>(f.V1("blkio", "blkio.throttle.io_service_bytes"),
                               cgroup::ParseBlkioServiceBytes);
  }
  if (!bytes) return;
  io.read_bytes = bytes->read;
  io.write_bytes = bytes->write;
}

void ReadPressure(const CgroupFiles& f, const char* file, PressureSample& out) {
  if (auto psi = Parse<PressureSample>(f.V2(file), cgroup::ParsePressure)) {
    out = *psi;
  }
}

}  // namespace

CgroupSample ReadCgroupSample(const CgroupHierarchies& hierarchies,
                              const std::string& relative_path) {
  const CgroupFiles files(hierarchies, relative_path);
  CgroupSample out;
  ReadCpu(files, out.cpu);
  ReadMemory(files, out.memory);
  ReadIo(files, out.io);
  ReadPressure(files, "cpu.pressure", out.cpu_pressure);
  ReadPressure(files, "memory.pressure", out.memory_pressure);
  ReadPressure(files, "io.pressure", out.io_pressure);
  return out;
}

std::vector<int> ReadCgroupPids(const CgroupHierarchies& hierarchies,
                                const std::string& relative_path) {
  std::vector<fs::path> roots;
  if (hierarchies.unified) roots.push_back(*hierarchies.unified);
  for (const auto& [controller, root] : hierarchies.v1) roots.push_back(root);
  for (const auto& root : roots) {
    const auto content = ReadSmallFile(root / relative_path / "cgroup.procs");
    if (!content) continue;
    auto pids = cgroup::ParseCgroupProcs(*content);
    if (pids && !pids->empty()) return std::move(*pids);
  }
  return {};
}

}  // namespace trainscope
