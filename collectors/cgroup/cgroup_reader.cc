#include "cgroup/cgroup_reader.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>

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

CgroupDir::CgroupDir(CgroupHierarchies hierarchies, std::string relative_path,
                     OpenFileBudget* budget)
    : hierarchies_(std::move(hierarchies)),
      relative_path_(std::move(relative_path)),
      budget_(budget) {}

CgroupDir::~CgroupDir() {
  for (auto& [hierarchy, dir] : dirs_) CloseFiles(dir);
}

void CgroupDir::CloseFiles(OpenDir& dir) {
  if (budget_ != nullptr) {
    for (size_t i = 0; i < dir.files.size(); ++i) budget_->Give();
  }
  dir.files.clear();
}

void CgroupDir::Refresh() {
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    OpenDir& dir = it->second;
    if (dir.fd.valid() && dir.on_cgroupfs) {
      ++it;
      continue;
    }
    CloseFiles(dir);
    it = dirs_.erase(it);
  }
  reused_ = false;
}

CgroupDir::OpenDir* CgroupDir::Dir(const fs::path& hierarchy) {
  auto [it, inserted] = dirs_.try_emplace(hierarchy);
  OpenDir& dir = it->second;
  if (inserted) {
    const fs::path path = hierarchy / relative_path_;
    dir.fd.reset(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    struct statfs fs_info {};
    dir.on_cgroupfs = dir.fd.valid() &&
                      ::fstatfs(dir.fd.get(), &fs_info) == 0 &&
                      (fs_info.f_type == CGROUP2_SUPER_MAGIC ||
                       fs_info.f_type == CGROUP_SUPER_MAGIC);
  }
  return dir.fd.valid() ? &dir : nullptr;
}

bool CgroupDir::Exists() {
  const size_t known = dirs_.size();
  bool exists = hierarchies_.unified && Dir(*hierarchies_.unified) != nullptr;
  for (auto it = hierarchies_.v1.begin();
       !exists && it != hierarchies_.v1.end(); ++it) {
    exists = Dir(it->second) != nullptr;
  }
  // Answered without opening anything: from directories of an earlier cycle.
  reused_ = exists && dirs_.size() == known;
  return exists;
}

std::optional<std::string> CgroupDir::ReadKept(OpenDir& dir, const char* file) {
  if (const auto it = dir.files.find(std::string_view(file));
      it != dir.files.end()) {
    if (auto content = RereadSmallFile(it->second.get())) return content;
    // Removed with its cgroup (ENODEV): forget it, try the name again.
    dir.files.erase(it);
    if (budget_ != nullptr) budget_->Give();
  }
  UniqueFd fd(::openat(dir.fd.get(), file, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  auto content = RereadSmallFile(fd.get());
  if (content && budget_->Take()) dir.files.emplace(file, std::move(fd));
  return content;
}

std::optional<std::string> CgroupDir::Read(const fs::path& hierarchy,
                                           const char* file) {
  OpenDir* dir = Dir(hierarchy);
  if (dir == nullptr) return std::nullopt;
  auto content = dir->on_cgroupfs && budget_ != nullptr
                     ? ReadKept(*dir, file)
                     : ReadSmallFileAt(dir->fd.get(), file);
  // Absent files are normal (v2 files on a hybrid host, PSI on old kernels);
  // only files that exist but cannot be read are worth a log line.
  if (!content && errno != ENOENT && errno != ENODEV) {
    spdlog::debug("[cgroup] cannot read {}: {}",
                  (hierarchy / relative_path_ / file).string(),
                  std::strerror(errno));
  }
  if (content) read_any_ = true;
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

  if (limits_due_) {
    auto bandwidth =
        Parse<cgroup::CpuBandwidth>(V2("cpu.max", "cpu"), cgroup::ParseCpuMax);
    if (!bandwidth) {
      const auto quota = V1("cpu", "cpu.cfs_quota_us");
      const auto period = V1("cpu", "cpu.cfs_period_us");
      if (quota && period) {
        bandwidth = cgroup::ParseCfsBandwidth(*quota, *period);
      }
    }
    limits_.limit_cores =
        bandwidth ? std::optional<double>(bandwidth->cores()) : std::nullopt;
  }
  cpu.limit_cores = limits_.limit_cores;
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

  if (limits_due_) {
    auto limit = Parse<cgroup::MemoryLimit>(V2("memory.max", "memory"),
                                            cgroup::ParseMemoryMax);
    if (!limit) {
      limit = Parse<cgroup::MemoryLimit>(V1("memory", "memory.limit_in_bytes"),
                                         cgroup::ParseMemoryLimitInBytes);
    }
    limits_.limit_bytes = limit ? limit->bytes : std::nullopt;
  }
  mem.limit_bytes = limits_.limit_bytes;

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
  read_any_ = false;
  limits_due_ = samples_since_limits_ == 0;
  samples_since_limits_ = (samples_since_limits_ + 1) % kLimitsEverySamples;
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

void CgroupDirCache::BeginCycle(const CgroupHierarchies& hierarchies) {
  if (hierarchies != hierarchies_) {
    dirs_.clear();
    hierarchies_ = hierarchies;
  }
  // Also after a cycle that threw before its end.
  for (auto& [path, entry] : dirs_) entry.used = false;
}

CgroupDir& CgroupDirCache::Get(const std::string& relative_path) {
  Entry& entry = dirs_[relative_path];
  if (!entry.dir) {
    entry.dir =
        std::make_unique<CgroupDir>(hierarchies_, relative_path, budget_);
  } else if (!entry.used) {
    entry.dir->Refresh();
  }
  entry.used = true;
  return *entry.dir;
}

void CgroupDirCache::Forget(const std::string& relative_path) {
  dirs_.erase(relative_path);
}

void CgroupDirCache::EndCycle() {
  std::erase_if(dirs_, [](const auto& entry) { return !entry.second.used; });
}

}  // namespace trainscope
