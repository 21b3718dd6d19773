#pragma once

#include <cstdint>
#include <string_view>

#include "trainscope/status.h"

namespace trainscope {

struct DiscoveryStats {
  bool ready = false;  // the first full list has been published
  uint64_t errors_total = 0;
  double last_success_unix_seconds = 0;
};

// Keeps a PodTable filled with the pods of this node. Each implementation
// (API server, pod file, cgroup scan) owns its background work.
class PodSource {
 public:
  virtual ~PodSource() = default;
  virtual std::string_view name() const = 0;
  // Validates configuration (token file readable, pod file parseable...) and
  // starts the background work. An error here is a start-up error of the agent.
  virtual Status Start() = 0;
  // Stops background work; returns within about a second.
  virtual void Stop() = 0;
  virtual DiscoveryStats stats() const = 0;
};

}  // namespace trainscope
