#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scenario.h"

namespace trainsim {

// The agent's steps/s per worker against the ground truth the pod
// processes count (docs/trainsim.md "Step rates"). Pure: the supervisor
// feeds, at each poll of the agent, every pod's step count and the agent's
// report; times are seconds since the traffic started.
//
// The true rate of a window between two polls is the steps completed
// between them over the time between their last completions (each pod
// stamps its last completed step), so it carries no error from where a
// poll falls within a step: at 5 s steps and a 2-5 s poll, a count over
// the poll interval alone would swing between 0 and 2 steps. Windows span
// at least kWindowS so a single late step moves a rate little; the figure
// of a span is the median of its windows' rates, so a rate change inside
// the span (a straggler's fault) counts for what it covers.
class StepRateTracker {
 public:
  static constexpr double kWindowS = 10;
  // The figure compared: the median over the last minute of the run.
  static constexpr double kLastS = 60;
  // The truth skips this much of the start (connections, first steps).
  static constexpr double kTruthWarmupS = 5;
  // The agent's estimates before this are left out: it needs a few steps
  // of traffic before it can see a period.
  static constexpr double kAgentWarmupS = 10;
  // Agreement required, as a fraction of the true rate.
  static constexpr double kTolerance = 0.10;
  // An estimate must be present in at least this share of the polls of the
  // last minute to count (absent = no clear period, says the contract).
  static constexpr double kMinCoverage = 0.5;

  explicit StepRateTracker(const Scenario& scenario);

  // One pod's step count at a poll; last_step_s: when its last counted step
  // completed (any time base: only differences are used), nullopt when
  // unknown.
  void ObserveTruth(const std::string& pod, double now_s, uint64_t steps,
                    std::optional<double> last_step_s);
  // One agent report (jobs[].worker_steps_per_second, and the job total
  // jobs[].steps_per_second) seen at a poll. In a cluster each node's agent
  // reports its own pods: call once per report.
  void ObserveAgent(const nlohmann::json& report, double now_s);

  // The pods the check covers one by one, none when the scenario skips the
  // check: the workers, and a real program's PyTorchJob master (rank 0 of
  // its ring trains too). A real program's TFJob chief is TF2's
  // ClusterCoordinator: it counts the job's steps and its workers count
  // none, so that job is checked as a whole (checked_jobs).
  const std::vector<std::string>& checked() const { return checked_; }
  // "namespace/job" of the jobs checked as a whole: the agent's job total
  // against the coordinator's count.
  const std::vector<std::string>& checked_jobs() const { return checked_jobs_; }
  bool enabled() const { return scenario_.skip_step_rate_check.empty(); }

  // A true rate against the agent's, over the last minute.
  struct Comparison {
    bool checked = false;
    std::optional<double> true_rate;   // median over the last minute
    std::optional<double> agent_rate;  // median of the agent's estimates
    double agent_coverage = 0;         // polls with an estimate / polls
    // Under kMinCoverage where the scenario allows a withdrawn rate
    // (step_rates_may_withdraw): agent_rate is then the median of the
    // estimates given, if any, and must still be right.
    bool withdrawn = false;
    std::optional<double> error;  // (agent - true) / true
    bool passed = true;
    std::string why;  // when not passed
  };
  struct WorkerFigures : Comparison {
    std::string pod, namespace_name, job;
  };
  std::vector<WorkerFigures> Workers() const;
  bool Passed() const;

  // The "step_rates" object of verify's last line: checked, passed, and
  // per checked worker pod, true/agent steps/s and error %.
  nlohmann::ordered_json ResultJson() const;
  // The table verify prints.
  std::string Table() const;

  // Per job: the true total steps/s (its counting pods' rates summed, or
  // its coordinator's), median over the last minute, and over [warm-up,
  // first fault) when every fault of the scenario starts after the warm-up
  // (else nullopt).
  struct JobFigures {
    std::string namespace_name, job;
    std::optional<double> last_minute;
    std::optional<double> before_faults;
    // The agent's job total (jobs[].steps_per_second, summed over a
    // cluster's node agents at each poll), median over the polls of the
    // last minute; checked (`check`) only for a job counted
    // by its coordinator, for the record otherwise.
    std::optional<double> agent_last_minute;
    Comparison check;
  };
  std::vector<JobFigures> Jobs() const;
  // The span the before-fault figures cover, when there is one.
  std::optional<std::pair<double, double>> BeforeFaultsSpan() const;
  // The span of the last minute, [from, to] (to: the last poll).
  std::pair<double, double> LastSpan() const;

 private:
  struct TruthSample {
    double t;
    uint64_t steps;
    std::optional<double> last_step_s;
  };
  struct PodInfo {
    std::string namespace_name, job;
  };
  // The pods whose step counts make a job's: summed, or its coordinator's.
  struct JobCount {
    std::string namespace_name, job;
    std::vector<std::string> pods;
    bool by_coordinator = false;
  };
  // Rates of the windows of `pod` lying within [from, to], keyed by the
  // window's end.
  std::map<double, double> WindowRates(const std::string& pod, double from,
                                       double to) const;
  // The job's rate at each window end where every counting pod has one.
  std::optional<double> JobRate(const JobCount& count, double from,
                                double to) const;
  // Judges `c.true_rate` against the agent's estimates at `estimates`
  // (poll time -> rate; null: none) over the last minute.
  void Compare(const std::map<double, double>* estimates, Comparison& c) const;
  double End() const;

  const Scenario& scenario_;
  std::map<std::string, PodInfo> workers_;  // pods checked one by one
  std::vector<std::string> checked_;
  std::vector<JobCount> job_counts_;  // in the scenario's order
  std::vector<std::string> checked_jobs_;
  std::set<std::string> counters_;  // every pod whose count is read
  std::map<std::string, std::vector<TruthSample>> truth_;

  std::vector<double> polls_;  // times of agent reports seen
  std::map<std::string, std::map<double, double>> agent_;
  // "namespace/job" -> poll time -> the agent's job total.
  std::map<std::string, std::map<double, double>> agent_jobs_;
};

// The median of `v` (mean of the middle two for an even count).
std::optional<double> Median(std::vector<double> v);

}  // namespace trainsim
