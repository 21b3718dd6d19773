#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "cgroup/cgroup_reader.h"
#include "cgroup/process_states.h"
#include "kube/pod_cgroups.h"
#include "trainscope/collector.h"
#include "trainscope/host_paths.h"

namespace trainscope {

// Per pod and per container CPU, memory, IO and PSI from the pods' cgroups,
// on cgroup v2, v1 and hybrid hosts. Fills Snapshot::pod_samples for every
// pod of the context whose cgroup exists, including a few PIDs per pod that
// later collectors (procnet, GPU) use, and those processes' states.
class CgroupCollector : public Collector {
 public:
  explicit CgroupCollector(const HostPaths& host);

  std::string_view name() const override { return "cgroup"; }
  CollectStatus Collect(const CollectContext& ctx, Snapshot& out) override;

 private:
  CollectStatus CollectOrThrow(const CollectContext& ctx, Snapshot& out);
  bool NeedsScan(const CgroupHierarchies& hierarchies,
                 const PodList* pods) const;

  // Walking every hierarchy for pod cgroups cost as much as reading them, so
  // the last walk is reused while it still explains what the pod list says
  // and nothing it found has vanished, and redone at least every
  // kRescanEveryCycles cycles for leaves no pod list names.
  static constexpr int kRescanEveryCycles = 12;

  // Files kept open between cycles: about 40 per pod on a hybrid host (pod
  // and container cgroups in v1 and v2, the processes' and threads' stat
  // files; 4,515 at 110 pods), so 16,384 covers about 400 pods; past it
  // files are opened per read. 1,024 descriptors stay for connections, BPF
  // objects, perf events and profiles.
  static constexpr size_t kKeptFilesWanted = 16384;
  static constexpr size_t kFilesReservedForTheRest = 1024;

  std::filesystem::path cgroup_root_;
  OpenFileBudget budget_;  // shared by the two below, which give back to it
  ProcessStateReader process_states_;
  CgroupDirCache dirs_;
  std::optional<CgroupHierarchies> scanned_;
  std::map<std::string, PodCgroup> pod_cgroups_;  // by pod uid
  int cycles_since_scan_ = 0;
  bool rescan_ = false;
};

}  // namespace trainscope
