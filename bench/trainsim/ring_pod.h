#pragma once

#include "layout.h"
#include "pod_process.h"

namespace trainsim {

// One rank of a built-in `allreduce` job: a synchronous ring allreduce of
// the job's gradient_bytes per step. Each step spends compute_ms of CPU,
// then runs N-1 reduce-scatter and N-1 all-gather rounds; in each round the
// rank sends one 1/N chunk to the next rank and receives one from the
// previous, on two long-lived connections (to next:port, from prev). A
// round cannot finish before the previous rank's chunk arrived, so every
// step is gated by the slowest rank. Runs until SIGTERM/SIGINT.
int RunRingPod(const PodProcessArgs& args, const Layout& layout,
               const SimPod& self);

}  // namespace trainsim
