// gpu_error: the driver reported Xid errors on a GPU a training pod holds.
// An Xid is an event, not a level: it enters at once and stays while it is
// recent. Its code says whether the GPU failed (critical: the job cannot
// go on on it) or the program faulted (warning).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "diagnosis/detectors.h"
#include "diagnosis/xid_catalog.h"

namespace trainscope::diagnosis {
namespace {

// One GPU of the pod with a recent Xid.
struct GpuFault {
  unsigned gpu = 0;
  const GpuXidStats* rises = nullptr;
  XidMeaning meaning;
  double age_s = 0;  // since its newest rise
};

Severity SeverityOf(XidClass cls) {
  return cls == XidClass::kHardware ? Severity::kCritical : Severity::kWarning;
}

// The pod's GPUs whose Xid counter rose within the recent period, the
// most severe first, then the newest.
std::vector<GpuFault> RecentFaults(const PodStats& history, double now,
                                   const GpuErrorSettings& s) {
  std::vector<GpuFault> faults;
  for (const auto& [gpu, rises] : history.gpu_xids) {
    const double age = std::max(0.0, now - rises.last_rise_t);
    if (rises.errors <= 0 || age > s.recent_s) continue;
    faults.push_back({gpu, &rises,
                      MeaningOfXid(static_cast<unsigned long long>(
                          std::max(0.0, rises.last_xid))),
                      age});
  }
  std::sort(faults.begin(), faults.end(),
            [](const GpuFault& a, const GpuFault& b) {
              const Severity sa = SeverityOf(a.meaning.cls);
              const Severity sb = SeverityOf(b.meaning.cls);
              if (sa != sb) return sa > sb;
              return a.age_s < b.age_s;
            });
  return faults;
}

nlohmann::json EvidenceOf(const GpuFault& f) {
  nlohmann::json gpu = {
      {"gpu", f.gpu},
      {"xid", static_cast<unsigned long long>(f.rises->last_xid)},
      {"meaning", std::string(f.meaning.words)},
      {"class", std::string(XidClassName(f.meaning.cls))},
      {"errors", f.rises->errors},
      {"seconds_since_xid", Round4(f.age_s)}};
  if (!f.rises->uuid.empty()) gpu["UUID"] = f.rises->uuid;
  return gpu;
}

std::string GpuName(const GpuFault& f) {
  return f.rises->uuid.empty()
             ? fmt::format("GPU {}", f.gpu)
             : fmt::format("GPU {} ({})", f.gpu, f.rises->uuid);
}

std::vector<std::string> AdviceFor(const GpuFault& f, const PodMeta& meta) {
  const auto xid = static_cast<unsigned long long>(f.rises->last_xid);
  const std::string node = meta.node.empty() ? "<node>" : meta.node;
  switch (f.meaning.cls) {
    case XidClass::kHardware:
      return {fmt::format(
                  "Drain {} (kubectl drain {} --ignore-daemonsets) so the job "
                  "resumes from its newest checkpoint on healthy GPUs; the "
                  "job cannot go on on {} until it is reset.",
                  node, node, GpuName(f)),
              fmt::format(
                  "On the node: nvidia-smi -q -i {} (ECC, remapped rows, "
                  "retired pages), then reset the GPU (nvidia-smi -r -i {}) "
                  "or reboot; if Xid {} comes back, collect "
                  "nvidia-bug-report.sh and report the board to the hardware "
                  "team for RMA.",
                  f.gpu, f.gpu, xid)};
    case XidClass::kApplication:
      return {fmt::format(
                  "Xid {} is usually the program's own fault: read the CUDA "
                  "error in kubectl logs -n {} {} (--previous if it "
                  "restarted), and rerun with CUDA_LAUNCH_BLOCKING=1 or "
                  "compute-sanitizer to find the kernel.",
                  xid, meta.namespace_name, meta.pod),
              "If the same GPU reports it for different jobs, treat it as "
              "hardware: drain the node and test the GPU."};
    case XidClass::kUnknown:
      break;
  }
  return {fmt::format(
      "Look Xid {} up in NVIDIA's Xid catalog "
      "(docs.nvidia.com/deploy/xid-errors) and read the driver's message "
      "on {} (dmesg | grep -i xid).",
      xid, node)};
}

}  // namespace

void DetectGpuError(const DetectorInput& in, const GpuErrorSettings& s,
                    std::vector<Finding>& out) {
  const auto& history = in.baseline.get().pods;
  for (const auto& [key, pod] : in.recent.pods) {
    // Any pod of a training job (a PS on a GPU too).
    if (pod.meta.training_job.empty() || pod.meta.role == Role::kUnknown)
      continue;
    // The longer history: an Xid stays named after the evaluation window
    // has moved past it (training_stalled computes it every evaluation
    // anyway, so reading it costs nothing more).
    const auto past = history.find(key);
    const PodStats& seen = past != history.end() ? past->second : pod;
    const auto faults = RecentFaults(seen, pod.newest_t, s);
    if (faults.empty()) continue;
    const GpuFault& worst = faults.front();

    Finding f;
    f.level = Finding::Level::kEvent;
    f.diagnosis =
        NewDiagnosis(kGpuError, SeverityOf(worst.meaning.cls), pod.meta);
    auto& ev = f.diagnosis.evidence;
    ev = EvidenceOf(worst);
    ev["gpus"] = nlohmann::json::array();
    for (const auto& fault : faults) ev["gpus"].push_back(EvidenceOf(fault));

    const auto xid = static_cast<unsigned long long>(worst.rises->last_xid);
    f.diagnosis.summary = fmt::format(
        "{} of {} reported Xid {} ({}) {:.0f} s ago{}.", GpuName(worst),
        pod.meta.pod, xid, worst.meaning.words, worst.age_s,
        worst.meaning.cls == XidClass::kHardware
            ? ": the GPU failed and the job cannot go on on it until it is "
              "reset"
        : worst.meaning.cls == XidClass::kApplication
            ? ": usually the program's own fault"
            : "");
    f.diagnosis.recommendations = AdviceFor(worst, pod.meta);
    out.push_back(std::move(f));
  }
}

}  // namespace trainscope::diagnosis
