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
  Evaluation ev = Evaluate(window_.Update(history), settings_);
  std::lock_guard lock(mu_);
  engine_.Update(ev.findings, history.back()->taken_at);
  active_ = FoldSamePodCauses(engine_.Active());
  jobs_ = std::move(ev.jobs);
  speeds_ = std::move(ev.speeds);
  headroom_ = std::move(ev.headroom);
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

std::vector<JobHeadroom> DiagnosisRunner::Headroom() const {
  std::lock_guard lock(mu_);
  return headroom_;
}

}  // namespace trainscope::diagnosis
