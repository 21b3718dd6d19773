#pragma once

#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diagnosis/diagnosis.h"
#include "trainscope/pod.h"

namespace trainscope::diagnosis {

// Goodput per training job (docs/diagnosis.md, "Goodput and lost time"):
// each evaluation interval of a job with pods on this node goes to exactly
// one state, and the time its diagnoses cost goes to their kinds.

// In the order they are judged: a stalled job is not also restarting.
enum class JobState { kProgress, kStalled, kRestarting };
inline constexpr std::array<JobState, 3> kJobStates = {
    JobState::kProgress, JobState::kStalled, JobState::kRestarting};
// "progress", "stalled", "restarting" (the metric's `state` label).
std::string_view JobStateName(JobState state);

struct JobGoodput {
  std::string namespace_name;
  std::string training_job;
  std::array<double, kJobStates.size()> seconds{};  // by JobState
  std::map<std::string, double> lost_seconds;       // by cause (kind)

  double Seconds(JobState state) const {
    return seconds[static_cast<size_t>(state)];
  }
  double TotalSeconds() const;
  double LostSeconds() const;
  // 1 - lost / all: a slowed job loses the time its causes cost even while
  // it progresses. 1 before any time was accounted.
  double GoodputRatio() const;
};

// Pure: fed the active diagnoses, the pods and the time after every
// evaluation; no clock, no I/O. Not thread-safe (the runner locks).
class GoodputAccounting {
 public:
  // A job with no pod on this node keeps its (frozen) series this long,
  // then they go, as a deleted pod's do.
  static constexpr std::chrono::minutes kForgetAfter{10};

  struct Input {
    const std::vector<Diagnosis>& active;
    const PodList& pods;       // this node's pods
    const PodList* peer_pods;  // every node's training pods; null when off
    std::chrono::system_clock::time_point now;
    // dt is capped here (3 intervals): a paused agent invents no time.
    std::chrono::system_clock::duration max_step;
  };
  void Update(const Input& in);

  // Jobs by namespace, then name.
  std::vector<JobGoodput> Jobs() const;

 private:
  using JobKey = std::pair<std::string, std::string>;
  struct Tracked {
    JobGoodput goodput;
    std::chrono::system_clock::time_point last_seen;
  };
  struct Verdict {
    JobState state = JobState::kProgress;
    std::vector<std::pair<std::string, double>> shares;  // kind, of dt
  };
  static Verdict Judge(const Input& in, const JobGoodput& job);
  void Account(const Input& in, double dt, JobGoodput& job) const;

  std::map<JobKey, Tracked> jobs_;
  std::optional<std::chrono::system_clock::time_point> last_;
};

// The typical time between snapshots (the median gap; a pause is one long
// gap among many), zero with fewer than two.
std::chrono::system_clock::duration TypicalInterval(
    const std::vector<std::chrono::system_clock::time_point>& taken_at);

}  // namespace trainscope::diagnosis
