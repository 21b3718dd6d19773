#include "diagnosis/runner.h"

#include "diagnosis/fold_causes.h"
#include "diagnosis/snapshot_window.h"

namespace trainscope::diagnosis {

DiagnosisRunner::DiagnosisRunner(std::string node, DiagnosisSettings settings)
    : node_(std::move(node)),
      settings_(settings),
      window_(node_),
      engine_(settings.engine) {}

void DiagnosisRunner::Update(
    const std::vector<std::shared_ptr<const Snapshot>>& history) {
  if (history.empty() || !history.back()) return;
  const Window& window = window_.Update(history);
  memory_.Observe(window);
  Evaluation ev = Evaluate(window, settings_, &memory_);
  std::lock_guard lock(mu_);
  engine_.Update(ev.findings, history.back()->taken_at);
  active_ = FoldSamePodCauses(engine_.Active());
  jobs_ = std::move(ev.jobs);
  speeds_ = std::move(ev.speeds);
  WithdrawStalledRates(active_, speeds_);
  headroom_ = std::move(ev.headroom);
  AccountGoodput(history);
}

// Each evaluation's interval to its jobs' states (goodput.h), capped at 3
// typical intervals.
void DiagnosisRunner::AccountGoodput(
    const std::vector<std::shared_ptr<const Snapshot>>& history) {
  std::vector<std::chrono::system_clock::time_point> taken_at;
  taken_at.reserve(history.size());
  for (const auto& s : history)
    if (s) taken_at.push_back(s->taken_at);
  const Snapshot& newest = *history.back();
  static const PodList kNoPods;
  goodput_.Update({.active = active_,
                   .pods = newest.pods ? *newest.pods : kNoPods,
                   .peer_pods = newest.peer_pods.get(),
                   .now = newest.taken_at,
                   .max_step = 3 * TypicalInterval(taken_at)});
}

std::vector<Diagnosis> DiagnosisRunner::Active() const {
  std::lock_guard lock(mu_);
  return active_;
}

std::vector<JobTraffic> DiagnosisRunner::Jobs() const {
  std::lock_guard lock(mu_);
  return jobs_;
}

std::vector<JobSpeed> DiagnosisRunner::Speeds() const {
  std::lock_guard lock(mu_);
  return speeds_;
}

std::vector<JobGoodput> DiagnosisRunner::Goodput() const {
  std::lock_guard lock(mu_);
  return goodput_.Jobs();
}

std::vector<JobHeadroom> DiagnosisRunner::Headroom() const {
  std::lock_guard lock(mu_);
  return headroom_;
}

}  // namespace trainscope::diagnosis
