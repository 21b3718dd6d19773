// gpu_error: Xid errors on a GPU a training pod holds, from the snapshot's
// GPUs to the finding (the agent's path), and the detector on synthetic
// windows, hostile input included.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "detector_cases.h"
#include "diagnosis/detectors.h"
#include "diagnosis/snapshot_window.h"
#include "diagnosis/xid_catalog.h"

namespace trainscope::diagnosis {
namespace {

using testing::FindingsOf;
using testing::WindowBuilder;

constexpr const char* kUuid = "GPU-8f9b3f0e-0000-4000-8000-000000000000";

// The Xid counter of one GPU at each instant (0, 5, 10 s); empty: the pod
// does not hold the GPU at that instant.
struct GpuSeries {
  unsigned gpu = 0;
  std::vector<std::optional<double>> errors;
  double last_xid = 0;
};

Window AllreduceWith(const std::vector<GpuSeries>& gpus,
                     Role role = Role::kWorker) {
  WindowBuilder b;
  for (const char* name : {"rank-0", "rank-1", "rank-2"}) {
    b.Pod(name, std::string(name) == "rank-1" ? role : Role::kWorker, "ring");
    if (std::string(name) != "rank-1") continue;
    auto& points = b.Timeline().points;
    for (const auto& g : gpus) {
      for (size_t i = 0; i < points.size() && i < g.errors.size(); ++i) {
        if (!g.errors[i]) continue;
        GpuXidPoint& x = points[i].gpu_xids[g.gpu];
        x.uuid = kUuid;
        x.errors = *g.errors[i];
        if (*g.errors[i] > 0) x.last_xid = g.last_xid;
      }
    }
  }
  return b.Build();
}

struct XidCase {
  const char* name;
  std::vector<GpuSeries> gpus;
  std::optional<Severity> want;  // empty: no finding
  double want_xid = 0;
  const char* want_meaning = "";
  double want_errors = 0;
  Role role = Role::kWorker;
};

TEST(GpuErrorTest, SeverityFollowsTheXidAndOnlyNewErrorsCount) {
  const XidCase cases[] = {
      {"fallen off the bus",
       {{0, {0, 1, 1}, 79}},
       Severity::kCritical,
       79,
       "GPU has fallen off the bus",
       1},
      {"double-bit ECC",
       {{0, {2, 2, 3}, 48}},
       Severity::kCritical,
       48,
       "double-bit ECC error",
       1},
      {"the program's illegal access",
       {{0, {0, 0, 2}, 13}},
       Severity::kWarning,
       13,
       "graphics engine exception",
       2},
      {"an Xid no table knows",
       {{0, {0, 1, 1}, 999}},
       Severity::kWarning,
       999,
       "unknown Xid",
       1},
      {"errors from before the window only",
       {{0, {4, 4, 4}, 79}},
       std::nullopt},
      {"the counter went down (driver reloaded)",
       {{0, {5, 0, 0}, 79}},
       std::nullopt},
      {"reloaded, then a new Xid: only the new one",
       {{0, {5, 0, 1}, 94}},
       Severity::kCritical,
       94,
       "contained ECC error",
       1},
      {"the process left the GPU and came back after the Xid",
       {{0, {0, std::nullopt, 1}, 79}},
       Severity::kCritical,
       79,
       "GPU has fallen off the bus",
       1},
      {"an application Xid and a hardware one: the hardware one leads",
       {{0, {0, 1, 1}, 31}, {1, {0, 0, 1}, 74}},
       Severity::kCritical,
       74,
       "NVLink error",
       1},
      {"no GPU at all", {}, std::nullopt},
      {"not a training pod",
       {{0, {0, 1, 1}, 79}},
       std::nullopt,
       0,
       "",
       0,
       Role::kUnknown},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto found = FindingsOf(kGpuError, AllreduceWith(c.gpus, c.role));
    if (!c.want) {
      EXPECT_TRUE(found.empty());
      continue;
    }
    ASSERT_EQ(found.size(), 1u);
    const auto& d = found[0].diagnosis;
    EXPECT_EQ(d.pod, "rank-1");
    EXPECT_EQ(d.severity, *c.want);
    EXPECT_EQ(found[0].level, Finding::Level::kEvent);
    EXPECT_EQ(d.evidence["xid"].get<double>(), c.want_xid);
    EXPECT_EQ(d.evidence["meaning"], c.want_meaning);
    EXPECT_EQ(d.evidence["errors"].get<double>(), c.want_errors);
    EXPECT_EQ(d.evidence["gpus"].size(), c.gpus.size());
    EXPECT_FALSE(d.recommendations.empty());
  }
}

TEST(GpuErrorTest, EvidenceAndAdviceNameTheGpu) {
  const auto hw = FindingsOf(kGpuError, AllreduceWith({{3, {0, 0, 1}, 79}}));
  ASSERT_EQ(hw.size(), 1u);
  const auto& d = hw[0].diagnosis;
  EXPECT_EQ(d.evidence["gpu"], 3);
  EXPECT_EQ(d.evidence["UUID"], kUuid);
  EXPECT_EQ(d.evidence["class"], "hardware");
  EXPECT_DOUBLE_EQ(d.evidence["seconds_since_xid"].get<double>(), 0);
  EXPECT_NE(d.summary.find("Xid 79"), std::string::npos) << d.summary;
  EXPECT_NE(d.recommendations[0].find("kubectl drain node-a"),
            std::string::npos)
      << d.recommendations[0];
  EXPECT_NE(d.recommendations[1].find("nvidia-smi -r -i 3"), std::string::npos)
      << d.recommendations[1];

  const auto app = FindingsOf(kGpuError, AllreduceWith({{0, {0, 1, 1}, 43}}));
  ASSERT_EQ(app.size(), 1u);
  EXPECT_EQ(app[0].diagnosis.evidence["class"], "application");
  EXPECT_NE(app[0].diagnosis.recommendations[0].find("kubectl logs"),
            std::string::npos);
}

// The Xid rose at 5 s: named while it is recent, over once recent_s has
// passed.
TEST(GpuErrorTest, StaysWhileRecent) {
  const Window w = AllreduceWith({{0, {0, 1, 1}, 79}});
  DiagnosisSettings s;
  s.gpu_error.recent_s = 5;
  EXPECT_EQ(FindingsOf(kGpuError, w, s).size(), 1u);
  s.gpu_error.recent_s = 4;
  EXPECT_TRUE(FindingsOf(kGpuError, w, s).empty());
}

// The evaluation window has moved past the Xid; the history still holds it.
TEST(GpuErrorTest, TheHistoryKeepsItNamedAfterTheWindowMoved) {
  WindowBuilder b(6, 5);
  b.Pod("rank-1", Role::kWorker, "ring");
  auto& points = b.Timeline().points;
  for (size_t i = 0; i < points.size(); ++i) {
    points[i].gpu_xids[0].errors = i >= 1 ? 1 : 0;
    points[i].gpu_xids[0].last_xid = 79;
  }
  const Window w = b.Build();
  const WindowStats history = ComputeStats(w);
  const WindowStats recent = ComputeStats(w, TimeRange{15, 25});
  const std::vector<JobTraffic> jobs;
  std::vector<Finding> out;
  DetectGpuError({recent, history, jobs, jobs}, GpuErrorSettings{}, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(out[0].diagnosis.evidence["seconds_since_xid"].get<double>(),
                   20);
  // Without the history (the recent window alone) there is nothing.
  out.clear();
  DetectGpuError({recent, recent, jobs, jobs}, GpuErrorSettings{}, out);
  EXPECT_TRUE(out.empty());
}

TEST(XidCatalogTest, ClassesAndWords) {
  EXPECT_EQ(MeaningOfXid(79).cls, XidClass::kHardware);
  EXPECT_EQ(MeaningOfXid(95).cls, XidClass::kHardware);
  EXPECT_EQ(MeaningOfXid(119).cls, XidClass::kHardware);
  EXPECT_EQ(MeaningOfXid(31).cls, XidClass::kApplication);
  EXPECT_EQ(MeaningOfXid(45).cls, XidClass::kApplication);
  EXPECT_EQ(MeaningOfXid(0).cls, XidClass::kUnknown);
  EXPECT_EQ(MeaningOfXid(999).words, "unknown Xid");
}

// The agent's path: the snapshot's GPUs reach only the pod whose processes
// run on them; a GPU no pod uses, or one without an Xid counter, reaches
// nobody.
TEST(GpuErrorTest, SnapshotsGiveEachPodTheXidsOfItsOwnGpus) {
  PodInfo worker;
  worker.uid = "uid-w";
  worker.namespace_name = "training";
  worker.name = "ctr-worker-0";
  worker.training_job = "ctr";
  worker.role = Role::kWorker;
  std::vector<std::shared_ptr<const Snapshot>> history;
  const auto t0 = std::chrono::system_clock::now() - std::chrono::minutes(1);
  for (int i = 0; i < 3; ++i) {
    auto s = std::make_shared<Snapshot>();
    s->taken_at = t0 + std::chrono::seconds(5 * i);
    s->sequence = static_cast<uint64_t>(i + 1);
    s->pods = std::make_shared<const PodList>(PodList{worker});
    s->pod_samples["uid-w"].uid = "uid-w";
    for (unsigned g = 0; g < 3; ++g) {
      GpuDeviceSample d;
      d.index = g;
      d.uuid = "GPU-" + std::to_string(g);
      // GPU 1 (the worker's) and GPU 0 (nobody's) raise Xids; GPU 2 has
      // no event API.
      if (g != 2) d.xid_errors = i >= 1 ? 2u : 0u;
      if (g != 2 && i >= 1) d.last_xid = g == 0 ? 48u : 13u;
      s->gpus.push_back(d);
    }
    for (unsigned g : {1u, 2u}) {
      GpuPodUsage u;
      u.pod_uid = "uid-w";
      u.gpu_index = g;
      s->gpu_pods.push_back(u);
    }
    GpuPodUsage stranger;  // a pod discovery does not know
    stranger.pod_uid = "uid-unknown";
    stranger.gpu_index = 0;
    s->gpu_pods.push_back(stranger);
    history.push_back(std::move(s));
  }
  const Window w = WindowFromSnapshots(history, "node-a");
  const auto& points = w.pods.at("training/ctr-worker-0").points;
  ASSERT_EQ(points.size(), 3u);
  ASSERT_EQ(points.back().gpu_xids.size(), 1u);
  EXPECT_EQ(points.back().gpu_xids.at(1).uuid, "GPU-1");
  EXPECT_EQ(points.back().gpu_xids.at(1).errors, 2);

  const auto found = FindingsOf(kGpuError, w);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].diagnosis.evidence["xid"], 13);
  EXPECT_EQ(found[0].diagnosis.severity, Severity::kWarning);
}

}  // namespace
}  // namespace trainscope::diagnosis
