// PodFilter and the sections that look pods up through ExportContext: a
// filtered-out pod loses its peer-traffic series too, not only its cgroup
// series.
#include <gtest/gtest.h>

#include "exposition/export_context.h"
#include "flows/flows_families.h"

namespace trainscope {
namespace {

PodInfo Pod(const std::string& uid, const std::string& ns,
            const std::string& name, Role role) {
  PodInfo p;
  p.uid = uid;
  p.namespace_name = ns;
  p.name = name;
  p.role = role;
  return p;
}

TEST(ExportPodFilterTest, TrainingRoleAndNamespaces) {
  const PodInfo worker = Pod("w", "training", "job-worker-0", Role::kWorker);
  const PodInfo web = Pod("n", "web", "nginx", Role::kUnknown);
  const PodFilter all;
  EXPECT_TRUE(all.Exports(worker));
  EXPECT_TRUE(all.Exports(web));
  const PodFilter training{.training_only = true};
  EXPECT_TRUE(training.Exports(worker));
  EXPECT_FALSE(training.Exports(web));
  const PodFilter only_web{.namespaces = {"web", "other"}};
  EXPECT_FALSE(only_web.Exports(worker));
  EXPECT_TRUE(only_web.Exports(web));
  const PodFilter training_in_web{.training_only = true, .namespaces = {"web"}};
  EXPECT_FALSE(training_in_web.Exports(worker));
  EXPECT_FALSE(training_in_web.Exports(web));
}

size_t SeriesOf(const std::vector<prometheus::MetricFamily>& families,
                const std::string& family) {
  for (const auto& f : families) {
    if (f.name == family) return f.metric.size();
  }
  return 0;
}

TEST(ExportPodFilterTest, FilteredPodsLoseTheirPeerSeries) {
  Snapshot snap;
  snap.pods = std::make_shared<const PodList>(
      PodList{Pod("w", "training", "job-worker-0", Role::kWorker),
              Pod("n", "web", "nginx", Role::kUnknown)});
  for (const char* uid : {"w", "n"}) {
    PeerTrafficSample s;
    s.pod_uid = uid;
    s.receive_bytes = 100;
    s.transmit_bytes = 200;
    snap.peer_traffic.push_back(s);
  }
  std::vector<prometheus::MetricFamily> everything, training;
  AppendFlowsFamilies(ExportContext(snap, "node-a"), everything);
  AppendFlowsFamilies(
      ExportContext(snap, "node-a", PodFilter{.training_only = true}),
      training);
  EXPECT_EQ(SeriesOf(everything, "trainscope_peer_receive_bytes_total"), 2u);
  EXPECT_EQ(SeriesOf(training, "trainscope_peer_receive_bytes_total"), 1u);
  ExportContext ctx(snap, "node-a", PodFilter{.training_only = true});
  EXPECT_NE(ctx.FindPod("w"), nullptr);
  EXPECT_EQ(ctx.FindPod("n"), nullptr);
}

}  // namespace
}  // namespace trainscope
