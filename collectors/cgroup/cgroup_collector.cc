#include "cgroup/cgroup_collector.h"

#include <algorithm>
#include <exception>
#include <map>
#include <system_error>

#include "cgroup/cgroup_reader.h"
#include "cgroup/pod_cgroups.h"
#include "spdlog/spdlog.h"

namespace trainscope {
namespace fs = std::filesystem;
namespace {

// Enough for procnet (one PID per network namespace suffices) and for GPU
// process matching, while bounding the work for pods with many processes.
constexpr size_t kMaxPids = 8;
// Discovery without names (cgroup mode) names containers like `docker ps`.
constexpr size_t kShortIdLength = 12;

void AddPids(const CgroupHierarchies& h, const std::string& relative_path,
             std::vector<int>& pids) {
  for (int pid : ReadCgroupPids(h, relative_path)) {
    if (pids.size() >= kMaxPids) return;
    if (std::find(pids.begin(), pids.end(), pid) == pids.end()) {
      pids.push_back(pid);
    }
  }
}

ContainerSample ReadContainer(const CgroupHierarchies& h,
                              const ContainerCgroup& leaf, std::string name) {
  ContainerSample out;
  out.name = std::move(name);
  out.id = leaf.id;
  out.cgroup_path = leaf.relative_path;
  out.cgroup = ReadCgroupSample(h, leaf.relative_path);
  return out;
}

PodSample ReadPod(const CgroupHierarchies& h, const PodInfo& info,
                  const PodCgroup& pod) {
  PodSample out;
  out.uid = pod.uid;
  out.cgroup_path = pod.relative_path;
  out.cgroup = ReadCgroupSample(h, pod.relative_path);

  // Leaves the pod spec names come first, in spec order; the others (the
  // pause sandbox) only count in the pod totals, which the kernel already
  // aggregates in the pod cgroup.
  std::vector<const ContainerCgroup*> named, unnamed;
  if (info.containers.empty()) {
    for (const auto& leaf : pod.containers) {
      out.containers.push_back(
          ReadContainer(h, leaf, leaf.id.substr(0, kShortIdLength)));
      named.push_back(&leaf);
    }
  } else {
    for (const auto& spec : info.containers) {
      const auto it = std::find_if(
          pod.containers.begin(), pod.containers.end(),
          [&](const ContainerCgroup& c) { return c.id == spec.id; });
      if (it == pod.containers.end()) continue;
      out.containers.push_back(ReadContainer(h, *it, spec.name));
      named.push_back(&*it);
    }
    for (const auto& leaf : pod.containers) {
      if (std::find(named.begin(), named.end(), &leaf) == named.end()) {
        unnamed.push_back(&leaf);
      }
    }
  }
  for (const auto* group : {&named, &unnamed}) {
    for (const auto* leaf : *group) AddPids(h, leaf->relative_path, out.pids);
  }
  AddPids(h, pod.relative_path, out.pids);
  return out;
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
    : cgroup_root_(host.cgroup_root) {}

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

  std::map<std::string, PodCgroup> by_uid;
  for (auto& pod : ScanPodCgroups(ReadHierarchies(hierarchies))) {
    by_uid.emplace(pod.uid, std::move(pod));
  }

  size_t matched = 0;
  if (ctx.pods) {
    for (const auto& info : *ctx.pods) {
      const auto it = by_uid.find(info.uid);
      if (it == by_uid.end()) {
        spdlog::debug("[cgroup] no cgroup for pod {}/{} uid {}",
                      info.namespace_name, info.name, info.uid);
        continue;
      }
      out.pod_samples[info.uid] = ReadPod(hierarchies, info, it->second);
      ++matched;
    }
  }
  spdlog::debug("[cgroup] {} pod cgroups found, {} matched known pods",
                by_uid.size(), matched);
  return CollectStatus::Ok();
}

}  // namespace trainscope
