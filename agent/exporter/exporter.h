#pragma once

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "discovery/pod_source.h"
#include "exposition/export_context.h"
#include "sampling/history.h"

namespace trainscope {

// The agent's view of itself, read at scrape time.
struct SelfStats {
  std::string discovery_mode;
  std::function<DiscoveryStats()> discovery;
  std::function<double()> sampler_cpu_seconds;
  std::function<uint64_t()> sampler_cycles;
};

// Renders /metrics: the sections' families rebuilt from the latest snapshot
// (so a deleted pod's series disappear), the agent's own metrics, and the
// prometheus-cpp registry of scrape counters.
class Exporter {
 public:
  Exporter(const History& history, std::string node,
           std::vector<FamilySection> sections, SelfStats self,
           PodFilter pod_filter = {});

  // Text exposition format 0.0.4. Before the first sample, only the agent's
  // own metrics are rendered.
  std::string Render();
  // The families of one render, for tests and benchmarks.
  std::vector<prometheus::MetricFamily> Collect() const;

 private:
  void AppendSelfFamilies(std::vector<prometheus::MetricFamily>& out) const;
  // Hands `sink` the families section by section (then the agent's own and
  // the registry's), clearing them in between.
  void ForEachSection(
      const std::function<void(std::vector<prometheus::MetricFamily>&)>& sink)
      const;

  const History& history_;
  const std::string node_;
  const PodFilter pod_filter_;
  const std::vector<FamilySection> sections_;
  const SelfStats self_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter* scrapes_total_;
  std::atomic<double> last_render_seconds_{0};
  std::atomic<size_t> last_render_bytes_{0};
};

}  // namespace trainscope
