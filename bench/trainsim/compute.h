#pragma once

#include "scenario.h"
#include "wire.h"

namespace trainsim {

// One step's compute of a built-in worker: `ms` of this thread's CPU time
// (ComputeOn::kCpu), or `ms` of wall time with the CPU idle, as while an
// accelerator computes (kAccelerator). Returns early once `stop` is set.
void ComputeStep(int ms, ComputeOn on, const StopState& stop);

}  // namespace trainsim
