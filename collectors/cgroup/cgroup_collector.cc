#include "cgroup/cgroup_collector.h"

#include <algorithm>
#include <exception>
#include <map>
#include <system_error>

#include "cgroup/cgroup_reader.h"
#include "cgroup/process_states.h"
#include "kube/pod_cgroups.h"
#include "spdlog/spdlog.h"

namespace trainscope {
namespace fs = std::filesystem;
namespace {

// Enough for procnet (one PID per network namespace suffices) and for GPU
// process matching, while bounding the work for pods with many processes.
constexpr size_t kMaxPids = 8;
// Discovery without names (cgroup mode) names containers like `docker ps`.
constexpr size_t kShortIdLength = 12;

void AddPids(CgroupDir& dir, std::vector<int>& pids) {
  if (pids.size() >= kMaxPids) return;
  for (int pid : dir.Pids()) {
    if (pids.size() >= kMaxPids) return;
    if (std::find(pids.begin(), pids.end(), pid) == pids.end()) {
      pids.push_back(pid);
    }
  }
}

// What one cycle read; `vanished` says the scan it used is out of date.
struct PodRead {
  std::optional<PodSample> sample;  // empty when the pod cgroup is gone
  bool vanished = false;
};

PodRead ReadPod(CgroupDirCache& dirs, const PodInfo& info,
                const PodCgroup& pod) {
  PodRead read;
  CgroupDir& pod_dir = dirs.Get(pod.relative_path);
  if (!pod_dir.Exists()) {
    read.vanished = true;
    return read;
  }
  CgroupSample pod_values = pod_dir.Sample();
  if (pod_dir.Stale()) {
    dirs.Forget(pod.relative_path);
    read.vanished = true;
    return read;
  }
  PodSample& out = read.sample.emplace();
  out.uid = pod.uid;
  out.cgroup_path = pod.relative_path;
  out.cgroup = pod_values;

  // Leaves the pod spec names come first, in spec order; the others (the
  // pause sandbox) only count in the pod totals, which the kernel already
  // aggregates in the pod cgroup.
  std::vector<std::pair<const ContainerCgroup*, std::string>> named;
  if (info.containers.empty()) {
    for (const auto& leaf : pod.containers) {
      named.emplace_back(&leaf, leaf.id.substr(0, kShortIdLength));
    }
  } else {
    for (const auto& spec : info.containers) {
      const auto it = std::find_if(
          pod.containers.begin(), pod.containers.end(),
          [&](const ContainerCgroup& c) { return c.id == spec.id; });
      if (it != pod.containers.end()) named.emplace_back(&*it, spec.name);
    }
  }
  for (const auto& [leaf, name] : named) {
    CgroupDir& dir = dirs.Get(leaf->relative_path);
    const bool exists = dir.Exists();
    CgroupSample values = exists ? dir.Sample() : CgroupSample{};
    if (!exists || dir.Stale()) {
      dirs.Forget(leaf->relative_path);
      read.vanished = true;
      continue;
    }
    ContainerSample& c = out.containers.emplace_back();
    c.name = name;
    c.id = leaf->id;
    c.cgroup_path = leaf->relative_path;
    c.cgroup = values;
    AddPids(dir, out.pids);
  }
  for (const auto& leaf : pod.containers) {
    const bool is_named =
        std::any_of(named.begin(), named.end(),
                    [&](const auto& n) { return n.first == &leaf; });
    if (is_named) continue;
    AddPids(dirs.Get(leaf.relative_path), out.pids);
  }
  // Processes sit in the pod cgroup itself only where no container leaves
  // exist; it is not read otherwise (it lists nothing, in every hierarchy).
  if (out.pids.empty()) AddPids(pod_dir, out.pids);
  return read;
}

// Only the hierarchies values are read from are scanned: every v1
// hierarchy holds the same pods, and each walk costs a directory tree.
CgroupHierarchies ReadHierarchies(const CgroupHierarchies& all) {
  CgroupHierarchies used;
  used.unified = all.unified;
  for (const char* controller : {"cpu", "cpuacct", "memory", "blkio"}) {
    const auto it = all.v1.find(controller);
    if (it != all.v1.end()) used.v1.insert(*it);
  }
  return used.unified || !used.v1.empty() ? used : all;
}

}  // namespace

CgroupCollector::CgroupCollector(const HostPaths& host)
    : cgroup_root_(host.cgroup_root),
      budget_(OpenFileBudget::FromFileLimit(kKeptFilesWanted,
                                            kFilesReservedForTheRest)),
      process_states_(host.proc, &budget_),
      dirs_(&budget_) {}

CollectStatus CgroupCollector::Collect(const CollectContext& ctx,
                                       Snapshot& out) {
  try {
    return CollectOrThrow(ctx, out);
  } catch (const std::exception& e) {
    return CollectStatus::Error("cgroup collection under " +
                                cgroup_root_.string() + " failed: " + e.what());
  } catch (...) {
    return CollectStatus::Error("cgroup collection under " +
                                cgroup_root_.string() +
                                " failed: unknown exception");
  }
}

bool CgroupCollector::NeedsScan(const CgroupHierarchies& hierarchies,
                                const PodList* pods) const {
  if (rescan_ || !scanned_ || *scanned_ != hierarchies ||
      cycles_since_scan_ >= kRescanEveryCycles) {
    return true;
  }
  if (!pods) return false;
  // A pod or container the scan has not seen: started since (or not yet
  // running, which keeps rescanning until it is; no worse than a scan every
  // cycle).
  for (const auto& info : *pods) {
    const auto it = pod_cgroups_.find(info.uid);
    if (it == pod_cgroups_.end()) return true;
    for (const auto& spec : info.containers) {
      if (spec.id.empty()) continue;
      const auto& known = it->second.containers;
      if (std::none_of(known.begin(), known.end(),
                       [&](const auto& c) { return c.id == spec.id; })) {
        return true;
      }
    }
  }
  return false;
}

CollectStatus CgroupCollector::CollectOrThrow(const CollectContext& ctx,
                                              Snapshot& out) {
  std::error_code ec;
  fs::directory_iterator probe(cgroup_root_, ec);
  if (ec) {
    return CollectStatus::Error("cgroup root " + cgroup_root_.string() +
                                " is not readable: " + ec.message());
  }
  // Detected every cycle: a handful of stat calls, and it follows remounts.
  const auto hierarchies = DetectHierarchies(cgroup_root_);
  if (!hierarchies.unified && hierarchies.v1.empty()) {
    return CollectStatus::Error("no cgroup hierarchy found under " +
                                cgroup_root_.string() +
                                " (neither cgroup.controllers nor v1 "
                                "controller directories)");
  }

  const CgroupHierarchies scanned = ReadHierarchies(hierarchies);
  if (NeedsScan(scanned, ctx.pods.get())) {
    pod_cgroups_.clear();
    for (auto& pod : ScanPodCgroups(scanned)) {
      pod_cgroups_.emplace(pod.uid, std::move(pod));
    }
    scanned_ = scanned;
    cycles_since_scan_ = 0;
    rescan_ = false;
  }
  ++cycles_since_scan_;

  size_t matched = 0;
  dirs_.BeginCycle(hierarchies);
  if (ctx.pods) {
    for (const auto& info : *ctx.pods) {
      const auto it = pod_cgroups_.find(info.uid);
      if (it == pod_cgroups_.end()) {
        spdlog::debug("[cgroup] no cgroup for pod {}/{} uid {}",
                      info.namespace_name, info.name, info.uid);
        continue;
      }
      PodRead read = ReadPod(dirs_, info, it->second);
      if (read.vanished) rescan_ = true;
      if (!read.sample) continue;
      read.sample->processes = process_states_.Read(read.sample->pids);
      out.pod_samples[info.uid] = std::move(*read.sample);
      ++matched;
    }
  }
  dirs_.EndCycle();
  process_states_.EndCycle();
  spdlog::debug("[cgroup] {} pod cgroups known, {} matched known pods",
                pod_cgroups_.size(), matched);
  return CollectStatus::Ok();
}

}  // namespace trainscope
