#include "discovery/cgroup_scan_source.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "kube/pod_cgroups.h"

namespace trainscope {

CgroupScanSource::CgroupScanSource(CgroupScanSourceOptions options,
                                   HostPaths host, PodTable& table)
    : options_(std::move(options)), host_(std::move(host)), table_(table) {}

CgroupScanSource::~CgroupScanSource() { Stop(); }

Status CgroupScanSource::ScanOnce() {
  std::error_code ec;
  if (!std::filesystem::is_directory(host_.cgroup_root, ec)) {
    return Status::Error("cgroup root " + host_.cgroup_root.string() +
                         ": not a directory");
  }
  CgroupHierarchies hierarchies = DetectHierarchies(host_.cgroup_root);
  if (!hierarchies.unified && hierarchies.v1.empty()) {
    return Status::Error("cgroup root " + host_.cgroup_root.string() +
                         ": no cgroup hierarchy found");
  }
  PodList pods;
  for (const PodCgroup& cg : ScanPodCgroups(hierarchies)) {
    PodInfo pod;
    pod.uid = cg.uid;
    pod.name = cg.uid;
    pod.phase = "Running";
    for (const ContainerCgroup& c : cg.containers) {
      pod.containers.push_back(
          ContainerInfo{c.id.substr(0, 12), c.id, c.runtime});
    }
    pods.push_back(std::move(pod));
  }
  if (pods.size() != last_count_) {
    spdlog::info("[discovery] cgroup scan of {}: {} pods",
                 host_.cgroup_root.string(), pods.size());
    last_count_ = pods.size();
  }
  table_.Replace(
      PreparePodsForPublish(std::move(pods), options_.label_schemes));
  std::lock_guard lock(stats_mu_);
  stats_.ready = true;
  stats_.last_success_unix_seconds =
      std::chrono::duration<double>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  return Status::Ok();
}

Status CgroupScanSource::Start() {
  if (thread_.joinable()) return Status::Error("cgroup source: started twice");
  Status st = ScanOnce();
  if (!st.ok()) return st;
  stop_.Reset();
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void CgroupScanSource::Run() {
  bool failing = false;
  while (!stop_.WaitFor(options_.interval)) {
    Status st = Status::Ok();
    try {
      st = ScanOnce();
    } catch (const std::exception& e) {
      st = Status::Error(std::string("cgroup scan: unexpected error: ") +
                         e.what());
    }
    if (!st.ok()) {
      {
        std::lock_guard lock(stats_mu_);
        ++stats_.errors_total;
      }
      // Log when it starts failing, not on every round.
      if (!failing) {
        spdlog::warn("[discovery] {} (keeping the last pod list)",
                     st.message());
      }
    } else if (failing) {
      spdlog::info("[discovery] cgroup scan of {} works again",
                   host_.cgroup_root.string());
    }
    failing = !st.ok();
  }
}

void CgroupScanSource::Stop() {
  stop_.Request();
  if (thread_.joinable()) thread_.join();
}

DiscoveryStats CgroupScanSource::stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

}  // namespace trainscope
