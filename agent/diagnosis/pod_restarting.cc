// pod_restarting: the kubelet restarted a container of a training pod. A
// restart costs the job the time the pod was down and whatever it computed
// since its last checkpoint; a crash loop stops it. The reason and exit
// code (the API's lastState.terminated) say where to look.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "diagnosis/detectors.h"
#include "diagnosis/impact.h"
#include "trainscope/time_format.h"

namespace trainscope::diagnosis {
namespace {

// The restart the pod shows now, if any: its last exit within the recent
// period, restarts counted in the window, or a container in back-off.
struct Restart {
  const ContainerTermination* last = nullptr;  // may be absent
  double age_s = 0;   // since the last exit (0 without one)
  double down_s = 0;  // from that exit to running again (or to now)
  bool looping = false;
};

std::optional<Restart> RestartOf(const PodStats& pod,
                                 const PodRestartSettings& s) {
  Restart r;
  r.looping = pod.crash_looping;
  const auto& last = pod.meta.last_termination;
  if (last && last->finished_at_s) {
    r.last = &*last;
    r.age_s = std::max(0.0, pod.newest_t - *last->finished_at_s);
  }
  const bool recent = r.last && r.age_s <= s.recent_s;
  const bool counted = pod.restarts_increase && *pod.restarts_increase > 0;
  if (!recent && !counted && !r.looping) return std::nullopt;
  if (r.last) {
    // Still waiting (back-off) or just restarted: down until now at most.
    const double until = r.looping ? pod.newest_t
                         : pod.meta.running_since_s
                             ? std::min(*pod.meta.running_since_s, pod.newest_t)
                             : pod.newest_t;
    r.down_s = std::max(0.0, until - *r.last->finished_at_s);
  }
  return r;
}

// The signal that ended the container: the one the API reports, else the
// shell's and runtimes' convention of 128 + signal as the exit code.
int SignalOf(const ContainerTermination& t) {
  if (t.signal != 0) return t.signal;
  return t.exit_code > 128 && t.exit_code < 160 ? t.exit_code - 128 : 0;
}

// How the container ended, in words a person searches for.
std::string ExitInWords(const ContainerTermination& t) {
  if (t.reason == "OOMKilled") return "OOMKilled (its memory limit)";
  const int signal = SignalOf(t);
  const char* name = signal == 9    ? "SIGKILL"
                     : signal == 15 ? "SIGTERM"
                     : signal == 11 ? "SIGSEGV"
                     : signal == 6  ? "SIGABRT"
                     : signal == 7  ? "SIGBUS"
                                    : nullptr;
  const std::string reason = t.reason.empty() ? "exited" : t.reason;
  if (name != nullptr) {
    return fmt::format("{}, exit code {} ({})", reason, t.exit_code, name);
  }
  return fmt::format("{}, exit code {}", reason, t.exit_code);
}

std::string WhereToLook(const PodMeta& meta, const ContainerTermination* t) {
  const std::string logs = fmt::format(
      "kubectl logs -n {} {} -c {} --previous", meta.namespace_name, meta.pod,
      meta.last_terminated_container.empty() ? "<container>"
                                             : meta.last_terminated_container);
  if (t == nullptr) {
    return fmt::format("Read why the last run ended: {}.", logs);
  }
  if (t->reason == "OOMKilled") {
    return fmt::format(
        "Raise the memory limit of {} above its peak working set, or hold "
        "less (smaller batches, input buffers, or variables partitioned over "
        "more PS); trainscope_pod_memory_working_set_bytes shows its peak.",
        meta.pod);
  }
  const int code = t->exit_code;
  const int signal = SignalOf(*t);
  if (signal == 9) {
    return fmt::format(
        "It was killed with SIGKILL from outside the program: a failed "
        "liveness probe, a preemption or an eviction; the pod's events say "
        "which (kubectl get events -n {} --field-selector "
        "involvedObject.name={}).",
        meta.namespace_name, meta.pod);
  }
  if (signal == 15) {
    return fmt::format(
        "It was asked to stop (SIGTERM: an eviction, a node drain, a "
        "preemption or the job's controller); the pod's events say which "
        "(kubectl get events -n {} --field-selector involvedObject.name={}).",
        meta.namespace_name, meta.pod);
  }
  if (signal == 11 || signal == 6 || signal == 7) {
    return fmt::format(
        "It crashed in native code (a segfault or abort: a CUDA, NCCL or "
        "extension fault); the end of {} and a core dump say where.",
        logs);
  }
  return fmt::format("The program exited with code {}: {} shows why.", code,
                     logs);
}

// The restart as a cost of the job: the share of the recent period the pod
// was down. A PS or an allreduce rank holds every step of its job; an
// asynchronous worker only its own.
double CostOfDowntime(const WindowStats& stats, const PodStats& pod,
                      double down_s, const PodRestartSettings& s,
                      std::string& model) {
  const double pod_cost = std::min(1.0, down_s / s.recent_s);
  model = "downtime_share";
  if (pod.meta.role == Role::kPs) return pod_cost;
  const auto ps =
      stats.job_ps.find(PodKey(pod.meta.namespace_name, pod.meta.training_job));
  if (ps == stats.job_ps.end() || ps->second.empty()) return pod_cost;
  size_t workers = 0;
  for (const auto& [key, other] : stats.pods) {
    workers += RunsTrainingSteps(other.meta.role) &&
               other.meta.namespace_name == pod.meta.namespace_name &&
               other.meta.training_job == pod.meta.training_job;
  }
  model += "_x_job_share";
  return workers > 0 ? pod_cost / static_cast<double>(workers) : pod_cost;
}

}  // namespace

void DetectPodRestarting(const DetectorInput& in, const PodRestartSettings& s,
                         std::vector<Finding>& out) {
  for (const auto& [key, pod] : in.recent.pods) {
    // Any pod of a training job (its PS too: a restarted PS stops it).
    if (pod.meta.training_job.empty() || pod.meta.role == Role::kUnknown)
      continue;
    const auto restart = RestartOf(pod, s);
    if (!restart) continue;
    // A crash loop, or restarts again and again over the longer history.
    const auto& history = in.baseline.get().pods;
    const auto past = history.find(key);
    const double restarts_in_history =
        past != history.end() ? past->second.restarts_increase.value_or(0) : 0;
    const bool looping =
        restart->looping || restarts_in_history >= s.loop_restarts;

    Finding f;
    f.level = Finding::Level::kEvent;
    f.diagnosis = NewDiagnosis(kPodRestarting, Severity::kWarning, pod.meta);
    auto& ev = f.diagnosis.evidence;
    if (pod.restarts) ev["restarts"] = *pod.restarts;
    ev["restarts_in_history"] = restarts_in_history;
    ev["crash_looping"] = restart->looping;
    ev["down_seconds"] = Round4(restart->down_s);
    if (restart->last != nullptr) {
      const ContainerTermination& t = *restart->last;
      ev["container"] = pod.meta.last_terminated_container;
      ev["reason"] = t.reason;
      ev["exit_code"] = t.exit_code;
      if (t.signal != 0) ev["signal"] = t.signal;
      ev["finished_at"] = Rfc3339(std::chrono::system_clock::time_point(
          std::chrono::seconds(static_cast<int64_t>(*t.finished_at_s))));
      ev["seconds_since_exit"] = Round4(restart->age_s);
    }
    std::string model;
    const double cost =
        CostOfDowntime(in.recent, pod, restart->down_s, s, model);
    SetImpact(f.diagnosis, cost, model,
              looping ? Severity::kCritical : Severity::kWarning);

    const std::string how = restart->last != nullptr
                                ? ExitInWords(*restart->last)
                                : std::string("no exit recorded");
    const std::string times =
        pod.restarts ? fmt::format(" ({:g} restarts in all)", *pod.restarts)
                     : "";
    f.diagnosis.summary =
        restart->looping
            ? fmt::format(
                  "{} is in a crash loop: the kubelet waits before "
                  "restarting it again{}; last exit: {}.",
                  pod.meta.pod, times, how)
            : fmt::format("{} restarted{} {:.0f} s ago: {}; down {:.0f} s.",
                          pod.meta.pod, times, restart->age_s, how,
                          restart->down_s);
    f.diagnosis.recommendations = {
        WhereToLook(pod.meta, restart->last),
        "Each restart costs the job the steps since its last checkpoint: "
        "checkpoint often enough that a restart loses minutes, not hours, "
        "and resume from the newest checkpoint on start."};
    out.push_back(std::move(f));
  }
}

}  // namespace trainscope::diagnosis
