#include "gpu/pid_pod.h"

#include <fstream>
#include <sstream>

#include "kube/pod_cgroups.h"

namespace trainscope {
namespace {

std::optional<PidPod> ParsePath(std::string_view path) {
  std::optional<PidPod> found;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    start = end + 1;
    if (part.empty()) continue;
    if (!found) {
      if (auto uid = PodUidFromDirName(part)) found = PidPod{*uid, ""};
      continue;
    }
    // Below the pod directory: the first container directory names the
    // container (sandbox "pause" containers are containers too).
    if (auto c = ContainerFromDirName(part)) {
      found->container_id = c->id;
      break;
    }
  }
  return found;
}

}  // namespace

std::optional<PidPod> ParsePidCgroup(std::string_view content) {
  std::optional<PidPod> best;
  size_t start = 0;
  while (start < content.size()) {
    size_t end = content.find('\n', start);
    if (end == std::string_view::npos) end = content.size();
    std::string_view line = content.substr(start, end - start);
    start = end + 1;
    // The path is everything after the second colon; it may itself contain
    // colons, so split on the first two only.
    size_t first = line.find(':');
    if (first == std::string_view::npos) continue;
    size_t second = line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    auto pod = ParsePath(line.substr(second + 1));
    if (!pod) continue;
    // On v1 hosts some controllers (e.g. a misc or rdma hierarchy) may stop
    // at the pod level; prefer a line that also names the container.
    if (!pod->container_id.empty()) return pod;
    if (!best) best = std::move(pod);
  }
  return best;
}

PidPodResult LookupPidPod(const std::filesystem::path& proc, unsigned pid) {
  std::ifstream in(proc / std::to_string(pid) / "cgroup");
  if (!in) return {PidLookup::kGone, {}};
  std::stringstream text;
  text << in.rdbuf();
  // An exited process can leave an empty file behind while it is reaped.
  if (text.str().empty()) return {PidLookup::kGone, {}};
  auto pod = ParsePidCgroup(text.str());
  if (!pod) return {PidLookup::kNotInPod, {}};
  return {PidLookup::kPod, std::move(*pod)};
}

}  // namespace trainscope
