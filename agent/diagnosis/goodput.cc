#include "diagnosis/goodput.h"

#include <algorithm>
#include <set>

namespace trainscope::diagnosis {
namespace {

using Clock = std::chrono::system_clock;

bool SameJob(const Diagnosis& d, const JobGoodput& job) {
  return d.namespace_name == job.namespace_name &&
         d.training_job == job.training_job;
}

// A pod that still runs or waits to (Succeeded and Failed pods are done:
// their job's time no longer passes here).
bool Holds(const PodInfo& pod) {
  return !pod.training_job.empty() && pod.phase != "Succeeded" &&
         pod.phase != "Failed";
}

size_t WorkersIn(const PodList& pods, const JobGoodput& job) {
  std::set<std::string> names;
  for (const PodInfo& p : pods)
    if (p.role == Role::kWorker && p.namespace_name == job.namespace_name &&
        p.training_job == job.training_job)
      names.insert(p.name);
  return names.size();
}

// N of "one worker of N lost": the job's workers seen cluster-wide (the
// peer pods), here, or in the detector's rank table, whichever is most.
double WorkerCount(const GoodputAccounting::Input& in, const Diagnosis& d,
                   const JobGoodput& job) {
  size_t n = WorkersIn(in.pods, job);
  if (in.peer_pods) n = std::max(n, WorkersIn(*in.peer_pods, job));
  if (const auto ranks = d.evidence.find("ranks");
      ranks != d.evidence.end() && ranks->is_array())
    n = std::max(n, ranks->size());
  return static_cast<double>(std::max<size_t>(n, 1));
}

std::optional<double> CostFraction(const Diagnosis& d) {
  const auto cost = d.evidence.find("cost_fraction");
  if (cost == d.evidence.end() || !cost->is_number()) return std::nullopt;
  return std::clamp(cost->get<double>(), 0.0, 1.0);
}

// The pod is not running now: pending, its container waits (back-off,
// creating) or has exited and not started again. A restart the pod is back
// from costs no more time.
bool Down(const PodInfo& pod) {
  if (pod.phase == "Pending") return true;
  return std::any_of(pod.containers.begin(), pod.containers.end(),
                     [](const auto& c) {
                       return !c.waiting_reason.empty() ||
                              (c.restart_count && !c.running_since_s);
                     });
}

const PodInfo* FindPod(const PodList& pods, const Diagnosis& d) {
  for (const PodInfo& p : pods)
    if (p.namespace_name == d.namespace_name && p.name == d.pod) return &p;
  return nullptr;
}

bool HasPs(const PodList& pods, const JobGoodput& job) {
  return std::any_of(pods.begin(), pods.end(), [&job](const PodInfo& p) {
    return p.role == Role::kPs && p.namespace_name == job.namespace_name &&
           p.training_job == job.training_job;
  });
}

// A down pod holds every step of its job unless it is one worker of a PS
// job (asynchronous: the others go on).
bool HoldsEveryStep(const GoodputAccounting::Input& in, const PodInfo& pod,
                    const JobGoodput& job) {
  if (pod.role == Role::kPs) return true;
  const bool ps =
      HasPs(in.pods, job) || (in.peer_pods && HasPs(*in.peer_pods, job));
  return !ps;
}

}  // namespace

// The interval's state, and while progressing each cause's share of it.
GoodputAccounting::Verdict GoodputAccounting::Judge(const Input& in,
                                                    const JobGoodput& job) {
  Verdict v;
  bool restarting = false;
  // A stopped worker's other diagnoses (a straggler, its throttling) are
  // the stall itself: its share counts once.
  std::set<std::string> stalled_pods;
  for (const Diagnosis& d : in.active)
    if (SameJob(d, job) && d.kind == kTrainingStalled && !d.pod.empty())
      stalled_pods.insert(d.pod);
  for (const Diagnosis& d : in.active) {
    if (!SameJob(d, job)) continue;
    if (d.kind != kTrainingStalled && stalled_pods.contains(d.pod)) continue;
    if (d.kind == kTrainingStalled && d.severity == Severity::kCritical) {
      v.state = JobState::kStalled;
      v.shares.clear();
      return v;
    }
    std::optional<double> share;
    if (d.kind == kPodRestarting) {
      const PodInfo* pod = FindPod(in.pods, d);
      if (pod == nullptr || !Down(*pod)) continue;
      if (HoldsEveryStep(in, *pod, job)) {
        restarting = true;
        continue;
      }
      share = 1 / WorkerCount(in, d, job);  // one async worker of N down
    } else if (d.kind == kTrainingStalled) {
      share = 1 / WorkerCount(in, d, job);  // one async worker of N stopped
    } else {
      share = CostFraction(d);
    }
    if (share && *share > 0) v.shares.emplace_back(d.kind, *share);
  }
  if (restarting) {
    v.state = JobState::kRestarting;
    v.shares.clear();
  }
  return v;
}

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kProgress:
      return "progress";
    case JobState::kStalled:
      return "stalled";
    case JobState::kRestarting:
      return "restarting";
  }
  return "";
}

double JobGoodput::TotalSeconds() const {
  double sum = 0;
  for (double s : seconds) sum += s;
  return sum;
}

double JobGoodput::LostSeconds() const {
  double sum = 0;
  for (const auto& [cause, s] : lost_seconds) sum += s;
  return sum;
}

double JobGoodput::GoodputRatio() const {
  const double total = TotalSeconds();
  if (total <= 0) return 1;
  return std::clamp(1 - LostSeconds() / total, 0.0, 1.0);
}

void GoodputAccounting::Update(const Input& in) {
  // Time going backwards (a clock step) or standing still counts nothing;
  // the next interval is measured from here.
  double dt = 0;
  if (last_ && in.now > *last_)
    dt = std::chrono::duration<double>(
             std::min<Clock::duration>(in.now - *last_, in.max_step))
             .count();
  const std::optional<Clock::time_point> previous = last_;
  last_ = in.now;

  std::set<JobKey> present;
  for (const PodInfo& p : in.pods)
    if (Holds(p)) present.insert({p.namespace_name, p.training_job});
  for (const JobKey& key : present) {
    auto [it, added] = jobs_.try_emplace(key);
    Tracked& t = it->second;
    if (added) {
      t.goodput.namespace_name = key.first;
      t.goodput.training_job = key.second;
    } else if (previous && t.last_seen == *previous) {
      // Only an interval the job was here at both ends is its time.
      Account(in, dt, t.goodput);
    }
    t.last_seen = in.now;
  }
  std::erase_if(jobs_, [&](const auto& entry) {
    return entry.second.last_seen + kForgetAfter < in.now;
  });
}

void GoodputAccounting::Account(const Input& in, double dt,
                                JobGoodput& job) const {
  if (dt <= 0) return;
  const Verdict v = Judge(in, job);
  job.seconds[static_cast<size_t>(v.state)] += dt;
  if (v.state == JobState::kStalled) {
    job.lost_seconds[std::string(kTrainingStalled)] += dt;
    return;
  }
  if (v.state == JobState::kRestarting) {
    job.lost_seconds[std::string(kPodRestarting)] += dt;
    return;
  }
  // Progressing, slowed: together the causes cannot cost more than the
  // whole interval.
  double sum = 0;
  for (const auto& [kind, share] : v.shares) sum += share;
  const double scale = sum > 1 ? 1 / sum : 1;
  for (const auto& [kind, share] : v.shares)
    job.lost_seconds[kind] += share * scale * dt;
}

std::vector<JobGoodput> GoodputAccounting::Jobs() const {
  std::vector<JobGoodput> out;
  out.reserve(jobs_.size());
  for (const auto& [key, t] : jobs_) out.push_back(t.goodput);
  return out;
}

Clock::duration TypicalInterval(
    const std::vector<Clock::time_point>& taken_at) {
  std::vector<Clock::duration> gaps;
  for (size_t i = 1; i < taken_at.size(); ++i)
    if (taken_at[i] > taken_at[i - 1])
      gaps.push_back(taken_at[i] - taken_at[i - 1]);
  if (gaps.empty()) return Clock::duration::zero();
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  return gaps[gaps.size() / 2];
}

}  // namespace trainscope::diagnosis
