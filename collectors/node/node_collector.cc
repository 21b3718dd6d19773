#include "node/node_collector.h"

#include <unistd.h>

#include <algorithm>
#include <system_error>

#include "node/node_parse.h"
#include "procnet/net_dev.h"
#include "trainscope/file_util.h"

namespace trainscope {

NodeCollector::NodeCollector(HostPaths host, NodeOptions options)
    : host_(std::move(host)),
      options_(std::move(options)),
      ticks_per_second_(static_cast<double>(::sysconf(_SC_CLK_TCK))) {}

Status NodeCollector::Collect(const CollectContext&, Snapshot& out) {
  auto stat = ReadSmallFile(host_.proc / "stat");
  if (!stat)
    return Status::Error("cannot read " + (host_.proc / "stat").string());
  auto cpu = ParseProcStat(*stat, ticks_per_second_);
  if (!cpu) {
    return Status::Error("no parseable cpu line in " +
                         (host_.proc / "stat").string());
  }
  out.node.cpu_seconds_total = cpu->busy_seconds;
  out.node.cpu_idle_seconds_total = cpu->idle_seconds;
  out.node.cpu_count = cpu->cpu_count;

  if (auto meminfo = ReadSmallFile(host_.proc / "meminfo")) {
    MemInfo mem = ParseMemInfo(*meminfo);
    out.node.memory_total_bytes = mem.total_bytes;
    out.node.memory_available_bytes = mem.available_bytes;
  }

  // PID 1's view is the host's network namespace even when the agent itself
  // runs in a pod network (hostPID is enough, hostNetwork is not needed).
  auto netdev = ReadSmallFile(host_.proc / "1" / "net" / "dev");
  if (!netdev) netdev = ReadSmallFile(host_.proc / "net" / "dev");
  if (!netdev) return Status::Ok();  // CPU and memory are still worth having
  const auto class_net = host_.sys / "class" / "net";
  for (auto& line : ParseNetDev(*netdev)) {
    if (!IsNodeLink(class_net, line.device)) continue;
    NicSample nic;
    nic.device = line.device;
    nic.counters = line.counters;
    if (options_.link_speed_bytes_per_second) {
      nic.speed_bytes_per_second = options_.link_speed_bytes_per_second;
    } else if (auto speed = ReadSmallFile(class_net / line.device / "speed")) {
      nic.speed_bytes_per_second = ParseLinkSpeedBytesPerSecond(*speed);
    }
    out.node.nics.push_back(std::move(nic));
  }
  std::sort(out.node.nics.begin(), out.node.nics.end(),
            [](const NicSample& a, const NicSample& b) {
              return a.device < b.device;
            });
  return Status::Ok();
}

bool NodeCollector::IsNodeLink(const std::filesystem::path& class_net,
                               const std::string& device) const {
  if (!options_.interfaces.empty()) {
    return std::find(options_.interfaces.begin(), options_.interfaces.end(),
                     device) != options_.interfaces.end();
  }
  // Physical (and virtio) NICs have a backing device; veths, bridges and
  // tunnels do not, and counting them would double count pod traffic.
  std::error_code ec;
  return std::filesystem::exists(class_net / device / "device", ec);
}

}  // namespace trainscope
