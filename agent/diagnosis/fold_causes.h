#pragma once

#include <vector>

#include "diagnosis/diagnosis.h"

namespace trainscope::diagnosis {

// One problem, one diagnosis: a straggler (straggler_worker,
// allreduce_straggler) and a single-pod diagnosis of the same pod that makes
// it one (cpu_throttled, memory_pressure, input_io_bound, the pod's own
// network_saturated) are one entry, the other folded into it:
// - cpu_throttled folds into the straggler (evidence.caused_by): the
//   straggler measures what the throttling costs the job, the throttled
//   share of periods only bounds it;
// - the straggler folds into input_io_bound, memory_pressure or
//   network_saturated (evidence.slows_job): those name the resource to fix,
//   and memory pressure carries the OOM risk a straggler cannot.
// The kept entry takes the higher severity and the larger cost of the two
// (cost_model says whose), its summary names the other kind and its
// recommendations gain the other's, without duplicates. Only findings fold
// (both warning or critical): an info entry is context, never hidden nor
// raised. Applied to the active set after the engine, so hysteresis, `since`
// and severities stay per diagnosis: when either clears, the other shows
// alone again with its own `since`. The node view (DiagnosisRunner) and the
// cluster view (EvaluateCluster) both call it, last.
// First, a training_stalled takes in what its stop makes the job show
// (evidence.folded): stragglers, a slow link, a hot or CPU-bound PS, input
// IO, an idle GPU, throttling and a full link, of any pod of the job for a
// job's stall (critical), of its own pod for one worker's (warning).
// pod_restarting, gpu_error and memory_pressure stay: they are causes.
std::vector<Diagnosis> FoldSamePodCauses(std::vector<Diagnosis> active);

}  // namespace trainscope::diagnosis
