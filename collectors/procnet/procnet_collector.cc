#include "procnet/procnet_collector.h"

#include <spdlog/spdlog.h>

#include <string>
#include <system_error>
#include <unordered_set>

#include "procnet/net_dev.h"
#include "trainscope/file_util.h"

namespace trainscope {
namespace {

// "net:[4026531992]" identifies a network namespace.
std::string NetNamespaceOf(const std::filesystem::path& proc, int pid) {
  std::error_code ec;
  auto target = std::filesystem::read_symlink(
      proc / std::to_string(pid) / "ns" / "net", ec);
  return ec ? std::string() : target.string();
}

}  // namespace

Status ProcNetCollector::Collect(const CollectContext& ctx, Snapshot& out) {
  std::unordered_set<std::string> host_network_uids;
  if (ctx.pods) {
    for (const auto& pod : *ctx.pods) {
      if (pod.host_network) host_network_uids.insert(pod.uid);
    }
  }
  const std::string host_netns = NetNamespaceOf(host_.proc, 1);
  size_t measured = 0, without_process = 0;
  for (auto& [uid, sample] : out.pod_samples) {
    if (host_network_uids.count(uid)) {
      sample.host_network = true;
      continue;
    }
    for (int pid : sample.pids) {
      std::string netns = NetNamespaceOf(host_.proc, pid);
      if (!netns.empty() && netns == host_netns) {
        // Discovery did not say so (cgroup mode), but the namespace does.
        sample.host_network = true;
        break;
      }
      auto text =
          ReadSmallFile(host_.proc / std::to_string(pid) / "net" / "dev");
      if (!text) continue;  // the process exited; try the next one
      sample.network = SumExceptLoopback(ParseNetDev(*text));
      ++measured;
      break;
    }
    if (!sample.network && !sample.host_network) ++without_process;
  }
  if (without_process > 0) {
    spdlog::debug("[procnet] {} pod(s) had no readable process netns",
                  without_process);
  }
  if (measured == 0 && without_process > 0) {
    return Status::Error("no pod's /proc/<pid>/net/dev was readable under " +
                         host_.proc.string());
  }
  return Status::Ok();
}

}  // namespace trainscope
