#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kube/pod_cgroups.h"
#include "trainscope/snapshot.h"
#include "trainscope/unique_fd.h"

namespace trainscope {

// One cgroup (pod or container), given relative to the hierarchy roots, in
// every hierarchy it lives in. Each directory is opened once (O_PATH), so an
// interface file costs one single-component openat instead of a walk down
// the whole path: with a few hundred cgroups and a dozen files each, those
// walks were most of a cycle. Never throws for I/O errors.
class CgroupDir {
 public:
  CgroupDir(const CgroupHierarchies& hierarchies, std::string relative_path);

  // Whether the cgroup's directory exists in any hierarchy read from.
  bool Exists();

  // The values from wherever each really is: the v2 file when the unified
  // tree has it and it carries the key, else the v1 controller's file. On a
  // hybrid host that means CPU usage and PSI from v2; limits, throttling,
  // memory and IO from v1. Unreadable files leave values empty.
  CgroupSample Sample();

  // PIDs from cgroup.procs of the first hierarchy (unified first) whose copy
  // of this cgroup lists any.
  std::vector<int> Pids();

 private:
  // The directory in `hierarchy`, opened on first use; -1 when absent.
  int Dir(const std::filesystem::path& hierarchy);
  std::optional<std::string> Read(const std::filesystem::path& hierarchy,
                                  const char* file);
  // `controller` names the v2 controller the file belongs to (nullptr for
  // core files such as cpu.stat and PSI): files of a controller the unified
  // root does not offer are not even tried.
  std::optional<std::string> V2(const char* file, const char* controller);
  std::optional<std::string> V1(const char* controller, const char* file);
  void ReadCpu(CpuSample& cpu);
  void ReadMemory(MemorySample& mem);
  void ReadIo(IoSample& io);

  const CgroupHierarchies& hierarchies_;
  std::string relative_path_;
  std::map<std::filesystem::path, UniqueFd> dirs_;
};

}  // namespace trainscope
