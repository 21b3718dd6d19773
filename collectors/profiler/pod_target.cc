#include "profiler/pod_target.h"

#include <sys/stat.h>

#include <fstream>

#include "bpf_common/cgroup2.h"
#include "kube/pod_cgroups.h"

namespace trainscope::profiler {
namespace {

namespace fs = std::filesystem;

uint64_t CgroupId(const fs::path& dir) {
  struct stat st {};
  return ::stat(dir.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

// The pod spec's name of the container whose runtime id is `id`; the short
// id when the spec does not say.
std::string ContainerName(const PodInfo& pod, const std::string& id) {
  for (const ContainerInfo& c : pod.containers) {
    if (c.id == id) return c.name;
  }
  return id.substr(0, 12);
}

}  // namespace

void PodTargetFrom(const fs::path& v2_root, uint32_t root_level,
                   const PodInfo& pod, const PodCgroup& pc, PodTarget* out) {
  out->pod_dir = v2_root / pc.relative_path;
  out->pod_levels = {root_level + CgroupLevel(pc.relative_path)};
  std::map<fs::path, std::string> container_dirs;
  for (const ContainerCgroup& c : pc.containers) {
    container_dirs[v2_root / c.relative_path] = ContainerName(pod, c.id);
  }
  auto add = [&](const fs::path& dir, const std::string& container) {
    if (uint64_t id = CgroupId(dir)) {
      out->cgroup_ids.push_back(id);
      out->dirs.push_back(dir);
      if (!container.empty()) out->container_of[id] = container;
    }
  };
  add(out->pod_dir, "");
  std::error_code ec;
  for (fs::recursive_directory_iterator it(out->pod_dir, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    std::string container;
    // The first directory below the pod on the way down is the container.
    for (fs::path p = it->path(); p != out->pod_dir && p.has_parent_path();
         p = p.parent_path()) {
      if (auto c = container_dirs.find(p); c != container_dirs.end()) {
        container = c->second;
      }
    }
    add(it->path(), container);
  }
}

Status ResolvePodTarget(const fs::path& v2_root, uint32_t root_level,
                        const PodInfo& pod, PodTarget* out) {
  for (const PodCgroup& pc : ScanPodCgroups(v2_root)) {
    if (pc.uid != pod.uid) continue;
    PodTargetFrom(v2_root, root_level, pod, pc, out);
    return Status::Ok();
  }
  return Status::NoData("no cgroup v2 directory for pod " + pod.namespace_name +
                        "/" + pod.name + " (uid " + pod.uid + ") under " +
                        v2_root.string());
}

std::vector<uint32_t> TargetProcesses(const PodTarget& target) {
  std::vector<uint32_t> pids;
  for (const fs::path& dir : target.dirs) {
    std::ifstream in(dir / "cgroup.procs");
    uint32_t pid = 0;
    while (in >> pid) pids.push_back(pid);
  }
  return pids;
}

}  // namespace trainscope::profiler
