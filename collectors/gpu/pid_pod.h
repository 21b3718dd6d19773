#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace trainscope {

// The pod (and container) a host process belongs to, from its cgroup path.
struct PidPod {
  std::string pod_uid;       // with dashes
  std::string container_id;  // runtime id; "" when the path ends at the pod
};

// Parses the text of /proc/<pid>/cgroup ("hierarchy-ID:controllers:path"
// lines, v1 and v2 alike) and finds a kubelet pod directory in any line's
// path. Matching works on path components, so it holds for any kubelet cgroup
// root, both cgroup drivers, and paths seen from another cgroup namespace
// ("/../../kubepods/..."). nullopt for processes outside pods.
std::optional<PidPod> ParsePidCgroup(std::string_view content);

enum class PidLookup { kPod, kNotInPod, kGone };

struct PidPodResult {
  PidLookup kind = PidLookup::kGone;
  PidPod pod;  // set for kPod
};

// Reads <proc>/<pid>/cgroup. kGone when the process has exited (it is racy by
// nature: NVML listed it a moment ago).
PidPodResult LookupPidPod(const std::filesystem::path& proc, unsigned pid);

}  // namespace trainscope
