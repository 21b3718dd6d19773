#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/diagnosis.h"
#include "diagnosis/window.h"

namespace trainscope::diagnosis {

// How fast one training job trains, from its workers' step rates (the
// period of their exchanges with their peers): the scaling view.
struct JobSpeed {
  std::string namespace_name;
  std::string training_job;
  // Workers (and allreduce masters) whose exchanges show a clear period,
  // by pod name.
  std::map<std::string, double> worker_steps_per_second;
  // Workers seen in the window whose exchanges show no clear period.
  std::vector<std::string> workers_without_rate;
  double steps_per_second = 0;  // sum over worker_steps_per_second
};

// Every job with at least one worker in the window.
std::vector<JobSpeed> ComputeJobSpeeds(const WindowStats& stats);

// A job that stopped has no step rate: the periodic traffic that goes on
// during a stall (a TF2 coordinator's polling, keep-alives) is not steps.
// Withdraws what the active training_stalled diagnoses cover: every
// worker's rate of a stalled job (critical), or the one worker's that
// stopped while the others go on (warning); they are then listed without
// a rate.
void WithdrawStalledRates(const std::vector<Diagnosis>& active,
                          std::vector<JobSpeed>& speeds);

// The step rate of a job's workers other than `except` (median); empty
// with fewer than one measured peer.
std::optional<double> PeerMedianSteps(const WindowStats& stats,
                                      const PodMeta& of,
                                      const std::string& except_key);

}  // namespace trainscope::diagnosis
