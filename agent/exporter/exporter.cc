#include "exporter/exporter.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iterator>

#include "exporter/process_stat.h"
#include "trainscope/file_util.h"
#include "version.h"

namespace trainscope {
namespace {

using prometheus::MetricType;

// What glibc's malloc holds, over all its arenas. RSS alone cannot tell a
// leak (live bytes that grow) from freed memory the allocator keeps in
// partly used pages; these two can.
struct HeapUsage {
  double in_use_bytes = 0;  // handed out to live objects, mmapped chunks too
  double free_bytes = 0;    // free in the arenas, not given back to the kernel
};

HeapUsage ReadHeapUsage() {
  const struct mallinfo2 info = mallinfo2();
  return {static_cast<double>(info.uordblks + info.hblkhd),
          static_cast<double>(info.fordblks)};
}

}  // namespace

Exporter::Exporter(const History& history, std::string node,
                   std::vector<FamilySection> sections, SelfStats self,
                   PodFilter pod_filter)
    : history_(history),
      node_(std::move(node)),
      pod_filter_(std::move(pod_filter)),
      sections_(std::move(sections)),
      self_(std::move(self)),
      registry_(std::make_shared<prometheus::Registry>()) {
  scrapes_total_ = &prometheus::BuildCounter()
                        .Name("trainscope_scrapes_total")
                        .Help("Renders of /metrics served by this agent.")
                        .Register(*registry_)
                        .Add({});
}

void Exporter::ForEachSection(
    const std::function<void(std::vector<prometheus::MetricFamily>&)>& sink)
    const {
  std::vector<prometheus::MetricFamily> families;
  if (auto snapshot = history_.Latest()) {
    ExportContext ctx(*snapshot, node_, pod_filter_);
    for (const FamilySection& section : sections_) {
      section(ctx, families);
      sink(families);
      families.clear();
    }
  }
  AppendSelfFamilies(families);
  for (auto& family : registry_->Collect())
    families.push_back(std::move(family));
  sink(families);
}

std::vector<prometheus::MetricFamily> Exporter::Collect() const {
  std::vector<prometheus::MetricFamily> all;
  ForEachSection([&all](std::vector<prometheus::MetricFamily>& families) {
    std::move(families.begin(), families.end(), std::back_inserter(all));
  });
  return all;
}

std::string Exporter::Render() {
  auto start = std::chrono::steady_clock::now();
  scrapes_total_->Increment();
  std::string text;
  // Sized once from the last render: growing by doubling would hold the old
  // and the new buffer at once, 3x the page at its peak.
  text.reserve(last_render_bytes_.load() + last_render_bytes_.load() / 8);
  // Each section is written and freed before the next is built: at 110 pods
  // the whole page's families (7,400 samples with their labels) took 4 MiB.
  ForEachSection([&text](std::vector<prometheus::MetricFamily>& families) {
    AppendTextFormat(families, text);
  });
  last_render_bytes_ = text.size();
  last_render_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return text;
}

void Exporter::AppendSelfFamilies(
    std::vector<prometheus::MetricFamily>& out) const {
  FamilyBuilder("trainscope_build_info",
                "1, labelled with the agent's version and source revision.",
                MetricType::Gauge)
      .Add({{"version", kVersion}, {"revision", kRevision}}, 1.0)
      .MoveInto(out);
  if (self_.discovery) {
    DiscoveryStats stats = self_.discovery();
    LabelMap labels = {{"mode", self_.discovery_mode}};
    FamilyBuilder("trainscope_discovery_ready",
                  "1 once pod discovery has listed this node's pods.",
                  MetricType::Gauge)
        .Add(labels, stats.ready ? 1.0 : 0.0)
        .MoveInto(out);
    FamilyBuilder("trainscope_discovery_errors_total",
                  "Failed pod discovery attempts (API errors, bad JSON, "
                  "unreadable pod file). Last known pods are kept meanwhile.",
                  MetricType::Counter)
        .Add(labels, static_cast<double>(stats.errors_total))
        .MoveInto(out);
    FamilyBuilder("trainscope_discovery_last_success_timestamp_seconds",
                  "Unix time of the last successful pod list or update.",
                  MetricType::Gauge)
        .Add(labels,
             stats.last_success_unix_seconds > 0
                 ? std::optional<double>(stats.last_success_unix_seconds)
                 : std::nullopt)
        .MoveInto(out);
  }
  if (self_.sampler_cycles) {
    FamilyBuilder("trainscope_sampler_cycles_total",
                  "Sampling cycles completed.", MetricType::Counter)
        .Add({}, static_cast<double>(self_.sampler_cycles()))
        .MoveInto(out);
  }
  if (self_.sampler_cpu_seconds) {
    FamilyBuilder("trainscope_sampler_cpu_seconds_total",
                  "CPU time spent in sampling cycles, in seconds.",
                  MetricType::Counter)
        .Add({}, self_.sampler_cpu_seconds())
        .MoveInto(out);
  }
  FamilyBuilder("trainscope_render_duration_seconds",
                "Wall time of the previous /metrics render, in seconds.",
                MetricType::Gauge)
      .Add({}, last_render_seconds_.load())
      .MoveInto(out);
  // The agent's own cost is the first thing an SRE checks, so it is always
  // exported, under the names every Prometheus client library uses.
  const ProcessStat self = ReadSelfProcessStat();
  FamilyBuilder("process_cpu_seconds_total",
                "User and system CPU time of the agent process, in seconds.",
                MetricType::Counter)
      .Add({}, self.cpu_seconds)
      .MoveInto(out);
  FamilyBuilder("process_resident_memory_bytes",
                "Resident memory of the agent process, in bytes.",
                MetricType::Gauge)
      .Add({}, self.resident_bytes)
      .MoveInto(out);
  FamilyBuilder("process_virtual_memory_bytes",
                "Virtual memory size of the agent process, in bytes.",
                MetricType::Gauge)
      .Add({}, self.virtual_bytes)
      .MoveInto(out);
  FamilyBuilder("process_start_time_seconds",
                "Start time of the agent process since the Unix epoch, in "
                "seconds.",
                MetricType::Gauge)
      .Add({}, self.start_time_seconds)
      .MoveInto(out);
  FamilyBuilder("process_open_fds",
                "File descriptors the agent process has open.",
                MetricType::Gauge)
      .Add({}, self.open_fds)
      .MoveInto(out);
  FamilyBuilder("process_max_fds",
                "The agent process's limit of open file descriptors "
                "(RLIMIT_NOFILE, soft).",
                MetricType::Gauge)
      .Add({}, self.max_fds)
      .MoveInto(out);
  const HeapUsage heap = ReadHeapUsage();
  FamilyBuilder("trainscope_agent_heap_in_use_bytes",
                "Bytes the agent's allocator (glibc malloc) has handed out "
                "to live objects, in all arenas and mmapped chunks.",
                MetricType::Gauge)
      .Add({}, heap.in_use_bytes)
      .MoveInto(out);
  FamilyBuilder("trainscope_agent_heap_free_bytes",
                "Bytes free in the allocator's arenas that it keeps rather "
                "than return to the kernel (resident once touched).",
                MetricType::Gauge)
      .Add({}, heap.free_bytes)
      .MoveInto(out);
}

}  // namespace trainscope
