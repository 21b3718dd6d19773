#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "diagnosis/diagnosis.h"
#include "diagnosis/headroom.h"
#include "diagnosis/ps_share.h"
#include "diagnosis/settings.h"
#include "diagnosis/window.h"

namespace trainscope::diagnosis {

// Stats computed on first use. The baseline (the whole history) costs as
// much as the rest of an evaluation, and only two detectors read it, for a
// few pods: the cluster view's replay evaluates 40 times per report.
class LazyStats {
 public:
  // Already computed (tests, the agent's single evaluation).
  LazyStats(const WindowStats& ready) : ready_(&ready) {}  // NOLINT: implicit
  explicit LazyStats(std::function<WindowStats()> compute)
      : compute_(std::move(compute)) {}

  const WindowStats& get() const {
    if (ready_) return *ready_;
    if (!value_) value_ = compute_();
    return *value_;
  }

 private:
  const WindowStats* ready_ = nullptr;
  std::function<WindowStats()> compute_;
  mutable std::optional<WindowStats> value_;
};

// Everything a detector may look at for one evaluation. Detectors are pure:
// same input, same findings.
struct DetectorInput {
  const WindowStats& recent;  // the evaluation window
  // The longer history (input_io_bound, allreduce_slow_link).
  LazyStats baseline;
  const std::vector<JobTraffic>& jobs;  // PS traffic of `recent`
  // PS traffic over the straggler window (StragglerSettings::window_samples,
  // never shorter than `recent`).
  const std::vector<JobTraffic>& sustained_jobs;
  // The scaling forecast of `recent` (null: not computed, as in tests that
  // do not need it).
  const std::vector<JobHeadroom>* headroom = nullptr;
};

// One file per detector; each appends findings for its kind.
void DetectHotParameterServer(const DetectorInput& in, const HotPsSettings& s,
                              const HeadroomSettings& headroom,
                              std::vector<Finding>& out);
void DetectPsCpuSaturated(const DetectorInput& in, const PsCpuSettings& s,
                          const HeadroomSettings& headroom,
                          std::vector<Finding>& out);
void DetectStragglerWorker(const DetectorInput& in, const StragglerSettings& s,
                           const DiagnosisSettings& all,
                           std::vector<Finding>& out);
void DetectCpuThrottled(const DetectorInput& in, const ThrottleSettings& s,
                        std::vector<Finding>& out);
void DetectNetworkSaturated(const DetectorInput& in, const NetworkSettings& s,
                            std::vector<Finding>& out);
void DetectMemoryPressure(const DetectorInput& in, const MemorySettings& s,
                          std::vector<Finding>& out);
void DetectInputIoBound(const DetectorInput& in, const InputIoSettings& s,
                        std::vector<Finding>& out);
// The cluster view evaluates a large cluster in batches of whole jobs
// (agent/cli/report_batches.h); each batch names only its own pods on a
// node's link. Merges the node-level network_saturated diagnoses of a node
// into one listing the busiest pods of all batches, and drops them where a
// pod-level one on the node's NIC says one pod fills the link.
std::vector<Diagnosis> MergeNodeLinkDiagnoses(std::vector<Diagnosis> all,
                                              const NetworkSettings& s);
void DetectGpuUnderutilized(const DetectorInput& in, const GpuSettings& s,
                            std::vector<Finding>& out);
void DetectAllreduceStraggler(const DetectorInput& in,
                              const DiagnosisSettings& all,
                              std::vector<Finding>& out);
void DetectAllreduceSlowLink(const DetectorInput& in,
                             const AllreduceLinkSettings& s,
                             std::vector<Finding>& out);
void DetectPodRestarting(const DetectorInput& in, const PodRestartSettings& s,
                         std::vector<Finding>& out);
void DetectTrainingStalled(const DetectorInput& in, const StallSettings& s,
                           std::vector<Finding>& out);
void DetectGpuError(const DetectorInput& in, const GpuErrorSettings& s,
                    std::vector<Finding>& out);

// What a detector compares: the pods of a whole job with each other (it
// needs the whole job in the window), or one pod or node on its own.
enum class DetectorScope { kPodOrNode, kWholeJob };

struct DetectorEntry {
  std::string_view kind;
  DetectorScope scope;
  void (*detect)(const DetectorInput& in, const DiagnosisSettings& settings,
                 std::vector<Finding>& out);
};

// The registry (detectors.cc): every detector, in catalog order. The kinds
// trainsim's scenario files accept and JudgesWholeJob read it.
std::span<const DetectorEntry> Detectors();

// Runs every detector of the registry; one that throws is logged and
// skipped.
std::vector<Finding> RunDetectors(const DetectorInput& in,
                                  const DiagnosisSettings& settings);

// How full a pod's link is in one direction: against its bandwidth
// annotation, or against the node NIC counting only what the NIC really
// carried (min of the pod's and the node's rate), so traffic between pods
// on the same node never fills a NIC. Empty when no capacity is known.
struct LinkUse {
  double ratio = 0;
  double bytes_per_second = 0;
  double capacity_bytes_per_second = 0;
  bool shaped = false;  // the annotation is the binding capacity
};
std::optional<LinkUse> LinkUtilization(const PodStats& pod, bool receive);

// A node's link in its fuller direction: empty without a known speed or
// rate.
struct NodeLinkUse {
  double ratio = 0;
  double bytes_per_second = 0;
  double capacity_bytes_per_second = 0;
  bool receive = false;
};
std::optional<NodeLinkUse> NodeLinkUtilization(const NodeStats& link);

// What one pod puts on its node's link in one direction: its traffic with
// peers that are not on the node when its peers are known, else its whole
// rate, capped by the link's (`node_rate`).
double OnLinkRate(const WindowStats& stats, const PodStats& pod, bool receive,
                  double node_rate);

// Share of its job's PS traffic at which a PS enters hot_parameter_server
// by the ratio rule (2-4 PS: 3:1 for 2 PS, 2x fair otherwise), and the
// least share at which the detector can still hold it (any rule, any PS
// count): the cluster view's triage asks no less (report_triage.h).
double HotPsRatioThreshold(size_t n, const HotPsSettings& s);
double HotPsHoldShare(size_t n, const HotPsSettings& s);

// Shared helpers.
Diagnosis NewDiagnosis(std::string_view kind, Severity severity,
                       const PodMeta& meta);
double Median(std::vector<double> values);
// Rounds for evidence so reports stay readable (4 significant digits).
double Round4(double v);

}  // namespace trainscope::diagnosis
