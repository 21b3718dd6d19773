#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cgroup/open_file_budget.h"
#include "kube/pod_cgroups.h"
#include "trainscope/snapshot.h"
#include "trainscope/unique_fd.h"

namespace trainscope {

// One cgroup (pod or container), given relative to the hierarchy roots, in
// every hierarchy it lives in. Each directory is opened once (O_PATH), so an
// interface file costs one single-component openat instead of a walk down
// the whole path. On cgroupfs the directories and the files read are also
// kept open between cycles (within the budget) and read again with pread,
// so a cycle costs one syscall per file instead of three: at 110 pods,
// opening and closing them was a third of the agent's CPU. Never throws
// for I/O errors.
class CgroupDir {
 public:
  // `budget` lends descriptors for files kept open; nullptr keeps none.
  CgroupDir(CgroupHierarchies hierarchies, std::string relative_path,
            OpenFileBudget* budget = nullptr);
  ~CgroupDir();
  CgroupDir(const CgroupDir&) = delete;
  CgroupDir& operator=(const CgroupDir&) = delete;

  // Starts a cycle: directories absent last time, and any not on cgroupfs,
  // are opened again.
  void Refresh();

  // Whether the cgroup's directory exists in any hierarchy read from.
  bool Exists();

  // The values from wherever each really is: the v2 file when the unified
  // tree has it and it carries the key, else the v1 controller's file. On a
  // hybrid host that means CPU usage and PSI from v2; limits, throttling,
  // memory and IO from v1. Unreadable files leave values empty.
  CgroupSample Sample();

  // A directory opened in an earlier cycle from which this cycle's Sample
  // read nothing: the cgroup was removed since (an open directory outlives
  // its cgroup; its files then fail to open or read).
  bool Stale() const { return reused_ && !read_any_; }

  // PIDs from cgroup.procs of the first hierarchy (unified first) whose copy
  // of this cgroup lists any.
  std::vector<int> Pids();

 private:
  struct OpenDir {
    UniqueFd fd;
    // Kept between cycles, with its files, on cgroupfs only: the kernel
    // never renames or replaces a cgroup's files, and a removed cgroup's
    // fail to read. A test's fixture tree may rename a directory or replace
    // a file by rename, which a kept descriptor would not follow: there
    // both are opened again each cycle, as by path.
    bool on_cgroupfs = false;
    std::map<std::string, UniqueFd, std::less<>> files;
  };

  // The directory in `hierarchy`, opened on first use; nullptr when absent.
  OpenDir* Dir(const std::filesystem::path& hierarchy);
  std::optional<std::string> Read(const std::filesystem::path& hierarchy,
                                  const char* file);
  std::optional<std::string> ReadKept(OpenDir& dir, const char* file);
  // `controller` names the v2 controller the file belongs to (nullptr for
  // core files such as cpu.stat and PSI): files of a controller the unified
  // root does not offer are not even tried.
  std::optional<std::string> V2(const char* file, const char* controller);
  std::optional<std::string> V1(const char* controller, const char* file);
  void ReadCpu(CpuSample& cpu);
  void ReadMemory(MemorySample& mem);
  void ReadIo(IoSample& io);
  void CloseFiles(OpenDir& dir);

  CgroupHierarchies hierarchies_;
  std::string relative_path_;
  OpenFileBudget* budget_;
  std::map<std::filesystem::path, OpenDir> dirs_;
  // Limits change only when a person resizes the pod: read on the first
  // Sample and every kLimitsEverySamples-th after (a minute at the default
  // interval; cAdvisor reads them once, at container start). Three of the
  // dozen files a hybrid host's cgroup costs each cycle.
  static constexpr int kLimitsEverySamples = 12;
  struct Limits {
    std::optional<double> limit_cores;
    std::optional<uint64_t> limit_bytes;
  } limits_;
  int samples_since_limits_ = 0;
  bool limits_due_ = true;

  bool reused_ = false;    // Exists() answered from an earlier cycle's fd
  bool read_any_ = false;  // the last Sample() read at least one file
};

// The cgroups read in the last cycle, kept with their open directories and
// files for the next; a cgroup no cycle reads is closed at the cycle's end.
class CgroupDirCache {
 public:
  // `budget` (outliving the cache) lends descriptors for kept files.
  explicit CgroupDirCache(OpenFileBudget* budget) : budget_(budget) {}

  // Starts a cycle over `hierarchies`; all is closed when they changed (a
  // remount).
  void BeginCycle(const CgroupHierarchies& hierarchies);
  // The cgroup at `relative_path`, refreshed once per cycle.
  CgroupDir& Get(const std::string& relative_path);
  // Closes `relative_path`'s directory: the next Get opens it afresh.
  void Forget(const std::string& relative_path);
  // Closes the cgroups this cycle did not read.
  void EndCycle();

 private:
  struct Entry {
    std::unique_ptr<CgroupDir> dir;
    bool used = false;
  };
  OpenFileBudget* budget_;
  CgroupHierarchies hierarchies_;
  std::map<std::string, Entry> dirs_;
};

}  // namespace trainscope
