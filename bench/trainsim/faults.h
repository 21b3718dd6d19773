#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "hang_faults.h"
#include "node.h"

namespace trainsim {

// Applies a scenario's faults when their start_s comes, and ends those with
// a duration_s. input_read is carried out by the worker process itself (it
// reads the scenario); here it is only logged.
class FaultScheduler {
 public:
  explicit FaultScheduler(SimNode& node);
  // Applies every fault with start_s <= elapsed_s not applied yet. A fault
  // that fails is logged and skipped, not retried.
  void Tick(double elapsed_s);
  // Seconds until the next pending fault (large when none; a fault's end
  // counts).
  double NextDue(double elapsed_s) const;

 private:
  void Apply(const Fault& fault);
  void WriteFakeNvml() const;

  SimNode& node_;
  // When each fault is due next (seconds into the run; +inf once done: a
  // fault with every_s repeats).
  std::vector<double> due_;
  // When each hang or checkpoint with a duration_s ends (+inf: with the
  // run, or once ended).
  std::vector<double> ends_;
  HangFaults hangs_;  // ends whatever is still active when the run ends
  std::map<std::string, const Fault*> gpu_;  // pod -> its active gpu fault
};

// The fake NVML's config (docs/gpu.md "Fake NVML"): one GPU per pod with a
// gpu fault, used by that pod's traffic process at the fault's utilization.
// The agent reads it through TRAINSCOPE_FAKE_NVML_CONFIG. Pure.
nlohmann::json FakeNvmlConfig(
    const std::vector<std::tuple<const SimPod*, pid_t, const Fault*>>& gpus);
std::string FakeNvmlPath(const std::string& run_id);

// The CNI bandwidth annotation value: 20 -> "20M", 2.5 -> "2500k".
std::string BandwidthQuantity(double mbit);

// `trainsim __hog`: busy threads until SIGTERM.
int RunCpuHog(int threads);
// `trainsim __memfill`: holds `bytes` of touched memory until SIGTERM.
int RunMemoryFill(uint64_t bytes);

}  // namespace trainsim
