#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenario.h"

namespace trainsim {

// One piece of a variable as a PS holds it (a whole variable, or a shard of
// a partitioned one: "embedding/part_2").
struct Slice {
  std::string name;
  uint64_t bytes = 0;
  int ps = 0;
};

// Where TensorFlow would put the job's variables, per its placement
// strategy (see DESIGN.md "Scenario format"). Pure.
std::vector<Slice> PlaceVariables(const Job& job);

// Bytes each PS holds; size job.ps.
std::vector<uint64_t> BytesPerPs(const Job& job,
                                 const std::vector<Slice>& slices);

}  // namespace trainsim
