#pragma once

#include <map>
#include <string>
#include <vector>

#include "profiler/profile.h"
#include "profiler/profiler_bpf.h"
#include "profiler/symbolizer.h"
#include "trainscope/pod.h"

namespace trainscope::profiler {

// Turns the kernel's aggregates into a symbolized profile: kernel frames
// above user frames (leaf first), markers where a stack is missing or
// truncated, labels from the pod and the sample's cgroup.
void AddSamples(const std::vector<RawStackCount>& raws, const PodInfo& pod,
                const std::map<uint64_t, std::string>& container_of,
                Symbolizer& symbolizer, Profile* profile);

}  // namespace trainscope::profiler
