#include "bpf_common/cgroup2.h"

#include <sys/stat.h>
#include <sys/vfs.h>

#include "kube/pod_cgroups.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;
constexpr long kCgroup2Magic = 0x63677270;  // CGROUP2_SUPER_MAGIC

bool IsCgroup2(const fs::path& dir) {
  struct statfs st {};
  return ::statfs(dir.c_str(), &st) == 0 && st.f_type == kCgroup2Magic;
}

}  // namespace

Status LocateCgroup2(const fs::path& cgroup_root, const fs::path& override_path,
                     Cgroup2Target* out) {
  fs::path root;
  out->root_level = 0;
  if (!override_path.empty()) {
    if (!IsCgroup2(override_path)) {
      return Status::Error("--cgroup2-path " + override_path.string() +
                           " is not a cgroup v2 mount");
    }
    root = override_path;
    for (fs::path p = fs::absolute(root).lexically_normal();
         p.has_relative_path() && IsCgroup2(p.parent_path());
         p = p.parent_path()) {
      if (!p.has_filename()) continue;  // a trailing '/'
      ++out->root_level;
    }
  } else {
    for (const fs::path& candidate : {cgroup_root, cgroup_root / "unified"}) {
      if (IsCgroup2(candidate)) {
        root = candidate;
        break;
      }
    }
    if (root.empty()) {
      return Status::Error("no cgroup v2 hierarchy at " + cgroup_root.string() +
                           " or " + (cgroup_root / "unified").string() +
                           " (cgroup_skb programs need cgroup v2)");
    }
  }
  out->root = root;
  out->attach = root;
  std::error_code ec;
  for (const char* name : {"kubepods.slice", "kubepods"}) {
    if (fs::is_directory(root / name, ec)) {
      out->attach = root / name;
      break;
    }
  }
  return Status::Ok();
}

uint32_t CgroupLevel(const fs::path& relative) {
  uint32_t n = 0;
  for (const auto& part : relative) {
    if (!part.empty() && part != "/" && part != ".") ++n;
  }
  return n;
}

std::map<uint64_t, PodCgroupId> ScanPodCgroupIds(const fs::path& v2_root) {
  std::map<uint64_t, PodCgroupId> out;
  for (const auto& pod : ScanPodCgroups(v2_root)) {
    struct stat st {};
    if (::stat((v2_root / pod.relative_path).c_str(), &st) != 0) continue;
    out[static_cast<uint64_t>(st.st_ino)] = {pod.uid,
                                             CgroupLevel(pod.relative_path)};
  }
  return out;
}

}  // namespace trainscope
