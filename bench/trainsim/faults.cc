#include "faults.h"

#include <spdlog/spdlog.h>
#include <sys/mman.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <thread>

#include "cgroups.h"
#include "fabric.h"
#include "netns.h"
#include "pod_process.h"

namespace trainsim {

std::string BandwidthQuantity(double mbit) {
  const long kbit = std::lround(mbit * 1000);
  return kbit % 1000 == 0 ? std::to_string(kbit / 1000) + "M"
                          : std::to_string(kbit) + "k";
}

FaultScheduler::FaultScheduler(SimNode& node) : node_(node), hangs_(node) {
  for (const Fault& f : node.scenario().faults) {
    due_.push_back(f.start_s);
    ends_.push_back(f.duration_s > 0 ? f.start_s + f.duration_s
                                     : std::numeric_limits<double>::infinity());
  }
}

void FaultScheduler::Tick(double elapsed_s) {
  const auto& faults = node_.scenario().faults;
  for (size_t i = 0; i < faults.size(); ++i) {
    if (ends_[i] <= elapsed_s && due_[i] > elapsed_s) {
      ends_[i] = std::numeric_limits<double>::infinity();
      try {
        hangs_.End(i);
      } catch (const std::exception& e) {
        spdlog::error("[trainsim] ending fault {} on {} failed: {}",
                      FaultKindName(faults[i].kind), faults[i].pod, e.what());
      }
    }
    if (due_[i] > elapsed_s) continue;
    due_[i] = faults[i].every_s > 0 ? due_[i] + faults[i].every_s
                                    : std::numeric_limits<double>::infinity();
    try {
      if (faults[i].kind == FaultKind::kHang ||
          faults[i].kind == FaultKind::kCheckpoint) {
        spdlog::info("[trainsim] fault {} {} on {} at {:.1f}s",
                     FaultKindName(faults[i].kind),
                     faults[i].kind == FaultKind::kHang
                         ? std::string(HangModeName(faults[i].hang_mode))
                         : std::to_string(faults[i].bytes) + " bytes",
                     faults[i].pod, faults[i].start_s);
        hangs_.Start(i, faults[i]);
      } else {
        Apply(faults[i]);
      }
    } catch (const std::exception& e) {
      spdlog::error(
          "[trainsim] fault {} on {} failed: {}", FaultKindName(faults[i].kind),
          faults[i].pod.empty() ? faults[i].node : faults[i].pod, e.what());
    }
  }
}

double FaultScheduler::NextDue(double elapsed_s) const {
  double next = std::numeric_limits<double>::infinity();
  const auto& faults = node_.scenario().faults;
  for (size_t i = 0; i < faults.size(); ++i)
    next = std::min({next, due_[i] - elapsed_s, ends_[i] - elapsed_s});
  return next;
}

void FaultScheduler::Apply(const Fault& f) {
  if (f.kind == FaultKind::kNodeBandwidthLimit) {
    for (const SimNodeInfo& n : node_.layout().nodes)
      if (n.name == f.node && !n.uplink.empty()) {
        spdlog::info(
            "[trainsim] fault node_bandwidth_limit on node {} at "
            "{:.1f}s: uplink {} at {} Mbit/s",
            f.node, f.start_s, n.uplink, f.mbit);
        LimitUplink(n, f.mbit);
        return;
      }
    throw std::runtime_error("no node " + f.node + " with an uplink");
  }
  const SimPod* pod = node_.layout().Find(f.pod);
  if (!pod) throw std::runtime_error("no such pod");
  spdlog::info("[trainsim] fault {} on {} at {:.1f}s", FaultKindName(f.kind),
               f.pod, f.start_s);
  switch (f.kind) {
    case FaultKind::kCpuLimit:
      node_.cgroups().SetCpuLimit(*pod, f.cores);
      // As an in-place resize would: the spec shows the new limit.
      node_.overrides(pod->name).cpu_limit_cores = f.cores;
      node_.UpdatePod(*pod);
      break;
    case FaultKind::kCpuHog:
      node_.SpawnInPod(*pod, {"__hog", "--threads", std::to_string(f.threads)},
                       pod->name + "-hog");
      break;
    case FaultKind::kBandwidthLimit: {
      LimitBandwidth(*pod, f.mbit);
      // What the CNI bandwidth plugin reads: the shaping shows in the API.
      const std::string rate = BandwidthQuantity(f.mbit);
      auto& ann = node_.overrides(pod->name).annotations;
      ann["kubernetes.io/ingress-bandwidth"] = rate;
      ann["kubernetes.io/egress-bandwidth"] = rate;
      node_.UpdatePod(*pod);
      break;
    }
    case FaultKind::kMemoryFill: {
      const uint64_t limit = pod->resources.memory_limit_bytes.value_or(0);
      const uint64_t bytes = static_cast<uint64_t>(f.ratio_of_limit * limit);
      node_.SpawnInPod(*pod, {"__memfill", "--bytes", std::to_string(bytes)},
                       pod->name + "-memfill");
      break;
    }
    case FaultKind::kInputRead: {
      // The worker reads by itself (it paces too, should this fail); the
      // kernel throttle makes it a real IO stall on a real device.
      const std::string dev = BlockDeviceOf(InputDir(node_.run_id()));
      if (dev.empty())
        spdlog::warn(
            "[trainsim] {} is not on a block device: input_read paced in user "
            "space only",
            InputDir(node_.run_id()));
      else
        node_.cgroups().SetReadBps(*pod, dev,
                                   static_cast<uint64_t>(f.mbit * 1e6 / 8));
      spdlog::info("[trainsim] {} now reads {} bytes per step at {} Mbit/s",
                   pod->name, f.bytes_per_step, f.mbit);
      break;
    }
    case FaultKind::kGpu:
      gpu_[pod->name] = &f;
      WriteFakeNvml();
      break;
    case FaultKind::kCrash:
      if (!node_.CrashPod(*pod, f.exit_code))
        spdlog::info("[trainsim] {} is down (backing off): crash skipped",
                     pod->name);
      break;
    case FaultKind::kOom: {
      // The fault's place in the list names its order, as a hang's does.
      const long order_id =
          static_cast<long>(&f - node_.scenario().faults.data()) + 1;
      if (!node_.OomPod(*pod, order_id))
        spdlog::info("[trainsim] {} is down (backing off): oom skipped",
                     pod->name);
      break;
    }
    case FaultKind::kNodeBandwidthLimit:
    case FaultKind::kHang:
    case FaultKind::kCheckpoint:
      break;  // handled above / by hangs_
  }
}

std::string FakeNvmlPath(const std::string& run_id) {
  return RunDir(run_id) + "/fake-nvml.json";
}

nlohmann::json FakeNvmlConfig(
    const std::vector<std::tuple<const SimPod*, pid_t, const Fault*>>& gpus) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& [pod, pid, f] : gpus) {
    const int util = static_cast<int>(std::lround(f->utilization * 100));
    // The fake delivers the Xids appended after the agent registered the
    // GPU: a later gpu fault on a GPU the agent already watches raises it.
    nlohmann::json xids = nlohmann::json::array();
    if (f->xid > 0) xids.push_back(f->xid);
    devices.push_back({{"uuid", "GPU-" + pod->uid},
                       {"name", "NVIDIA A100-SXM4-40GB"},
                       {"utilization_gpu", util},
                       {"utilization_memory", util / 2},
                       {"memory_total", 42949672960ULL},
                       {"memory_used", f->memory_bytes},
                       {"power_mw", 50000 + util * 3000},
                       {"temperature", 35 + util / 3},
                       {"sm_clock_mhz", 1410},
                       {"process_utilization_supported", true},
                       {"xid_supported", true},
                       {"xid_events", xids},
                       {"processes",
                        {{{"pid", pid},
                          {"used_memory", f->memory_bytes},
                          {"sm_util", util}}}}});
  }
  return {{"init_result", 0}, {"devices", devices}};
}

void FaultScheduler::WriteFakeNvml() const {
  std::vector<std::tuple<const SimPod*, pid_t, const Fault*>> gpus;
  for (const auto& [name, f] : gpu_)
    gpus.emplace_back(node_.layout().Find(name), node_.PodPid(name), f);
  // Written aside and renamed: the fake NVML may read it at any moment.
  const std::string path = FakeNvmlPath(node_.run_id());
  {
    std::ofstream out(path + ".tmp");
    out << FakeNvmlConfig(gpus).dump(2) << "\n";
    if (!out) throw std::runtime_error("writing " + path + ".tmp failed");
  }
  if (std::rename((path + ".tmp").c_str(), path.c_str()) != 0)
    throw std::runtime_error("rename to " + path + ": " + std::strerror(errno));
}

int RunCpuHog(int threads) {
  BlockStopSignals();
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int i = 0; i < threads; ++i)
    busy.emplace_back([&stop] {
      volatile uint64_t x = 1;
      while (!stop.load(std::memory_order_relaxed))
        for (int k = 0; k < 100000; ++k) x = x * 6364136223846793005ULL + 1;
    });
  while (!WaitForStop(1000)) {
  }
  stop = true;
  for (auto& t : busy) t.join();
  return 0;
}

int RunMemoryFill(uint64_t bytes) {
  BlockStopSignals();
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    spdlog::error("[trainsim] memory_fill: mmap {} bytes: {}", bytes,
                  std::strerror(errno));
    return 1;
  }
  // Touch every page, in steps, so the working set grows like a leaking
  // process rather than in one spike; past the limit the kernel OOM-kills us.
  const uint64_t step = 16ULL << 20;
  for (uint64_t off = 0; off < bytes; off += step) {
    std::memset(static_cast<char*>(mem) + off, 0x5a,
                std::min(step, bytes - off));
    if (WaitForStop(50)) return 0;
  }
  spdlog::info("[trainsim] memory_fill: holding {} bytes", bytes);
  while (!WaitForStop(1000)) {
  }
  munmap(mem, bytes);
  return 0;
}

}  // namespace trainsim
