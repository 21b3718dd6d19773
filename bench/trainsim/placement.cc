#include "placement.h"

#include <algorithm>

namespace trainsim {

std::vector<Slice> PlaceVariables(const Job& job) {
  std::vector<Slice> slices;
  if (job.ps < 1) return slices;
  switch (job.placement.strategy) {
    case Strategy::kRoundRobin:
      for (size_t i = 0; i < job.variables.size(); ++i)
        slices.push_back({job.variables[i].name, job.variables[i].bytes,
                          static_cast<int>(i % job.ps)});
      break;
    case Strategy::kGreedy: {
      // TF's GreedyLoadBalancingStrategy: the least loaded PS so far, the
      // lowest index on ties.
      std::vector<uint64_t> load(job.ps, 0);
      for (const Variable& v : job.variables) {
        int ps = static_cast<int>(std::min_element(load.begin(), load.end()) -
                                  load.begin());
        load[ps] += v.bytes;
        slices.push_back({v.name, v.bytes, ps});
      }
      break;
    }
    case Strategy::kPartitioned: {
      const uint64_t shards =
          job.placement.shards > 0 ? job.placement.shards : job.ps;
      // Each shard is its own variable to replica_device_setter, so the
      // round-robin counter runs on across variables.
      size_t next = 0;
      for (const Variable& v : job.variables) {
        if (v.bytes <= job.placement.min_slice_bytes || shards == 1) {
          slices.push_back(
              {v.name, v.bytes, static_cast<int>(next++ % job.ps)});
          continue;
        }
        const uint64_t n = std::min<uint64_t>(shards, v.bytes);
        for (uint64_t k = 0; k < n; ++k) {
          uint64_t bytes = v.bytes / n + (k < v.bytes % n ? 1 : 0);
          slices.push_back({v.name + "/part_" + std::to_string(k), bytes,
                            static_cast<int>(next++ % job.ps)});
        }
      }
      break;
    }
  }
  return slices;
}

std::vector<uint64_t> BytesPerPs(const Job& job,
                                 const std::vector<Slice>& slices) {
  std::vector<uint64_t> out(std::max(job.ps, 0), 0);
  for (const Slice& s : slices) out[s.ps] += s.bytes;
  return out;
}

}  // namespace trainsim
