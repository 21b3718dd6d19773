#include "report_page/layout.h"

#include <gtest/gtest.h>

#include <set>

#include "report_page/model.h"
#include "synthetic_report.h"

namespace trainscope::page {
namespace {

using testing::JobSpec;
using testing::SyntheticJob;
using testing::SyntheticReport;

JobView ViewOf(const JobSpec& spec) {
  ReportModel m = ModelOf(SyntheticReport({SyntheticJob(spec)}));
  return m.jobs.at(0);
}

// Every box inside its frame and the drawing, no two boxes or frames
// overlapping, every pod drawn exactly once.
void ExpectTidy(const JobView& job, const JobLayout& l,
                const LayoutLimits& lim) {
  const Rect all{0, 0, l.width, l.height};
  EXPECT_LE(l.width, lim.max_width + 1e-6);
  for (size_t i = 0; i < l.groups.size(); ++i) {
    EXPECT_TRUE(Contains(all, l.groups[i].rect)) << "frame " << i;
    for (size_t j = i + 1; j < l.groups.size(); ++j) {
      EXPECT_FALSE(Overlaps(l.groups[i].rect, l.groups[j].rect))
          << "frames " << i << " and " << j;
    }
  }
  std::set<size_t> ps, workers;
  for (size_t i = 0; i < l.boxes.size(); ++i) {
    const PodBox& b = l.boxes[i];
    EXPECT_GT(b.rect.w, 0);
    EXPECT_TRUE(Contains(l.groups.at(b.group).rect, b.rect)) << "box " << i;
    for (size_t j = i + 1; j < l.boxes.size(); ++j) {
      ASSERT_FALSE(Overlaps(b.rect, l.boxes[j].rect))
          << "boxes " << i << " and " << j;
    }
    for (size_t m : b.members) {
      EXPECT_TRUE((b.ps ? ps : workers).insert(m).second) << "pod twice";
    }
  }
  EXPECT_EQ(ps.size(), job.ps.size());
  EXPECT_EQ(workers.size(), job.workers.size());
  for (const auto& e : l.edges) {
    EXPECT_LT(e.ps_box, l.boxes.size());
    EXPECT_TRUE(l.boxes[e.ps_box].ps);
    EXPECT_GT(e.bytes_per_second, 0);
    EXPECT_LE(e.bytes_per_second, l.max_edge_bytes_per_second);
  }
}

TEST(LayoutTest, NoOverlapUpToTwentyPsAndTwoHundredWorkers) {
  const LayoutLimits lim;
  for (size_t ps : {0, 1, 2, 5, 20}) {
    for (size_t workers : {1, 6, 24, 41, 120, 200}) {
      for (size_t nodes : {1, 2, 3, 7, 20}) {
        SCOPED_TRACE(::testing::Message() << ps << " PS, " << workers
                                          << " workers, " << nodes << " nodes");
        JobView job = ViewOf({.ps = ps, .workers = workers, .nodes = nodes});
        JobLayout l = LayoutJob(job, lim);
        EXPECT_FALSE(l.summarised);
        // Every pod its own box.
        EXPECT_EQ(l.boxes.size(), ps + workers);
        EXPECT_EQ(l.groups.size(), std::min(nodes, ps + workers));
        ExpectTidy(job, l, lim);
      }
    }
  }
}

TEST(LayoutTest, GroupsByNodeOnlyWhenSeveralAreKnown) {
  JobLayout one = LayoutJob(ViewOf({.nodes = 1}));
  ASSERT_EQ(one.groups.size(), 1u);
  EXPECT_FALSE(one.groups[0].labelled);
  JobLayout three = LayoutJob(ViewOf({.nodes = 3}));
  ASSERT_EQ(three.groups.size(), 3u);
  for (const auto& g : three.groups) EXPECT_TRUE(g.labelled);
  // PS sit above the workers of the same frame.
  for (const auto& b : three.boxes) {
    if (!b.ps) continue;
    for (const auto& w : three.boxes) {
      if (!w.ps && w.group == b.group) {
        EXPECT_LT(b.rect.y, w.rect.y);
      }
    }
  }
}

TEST(LayoutTest, EdgeWeightsFollowTheBytes) {
  JobView job = ViewOf({.ps = 4, .workers = 6, .hot_share = 0.85});
  JobLayout l = LayoutJob(job);
  ASSERT_FALSE(l.bundled_edges);
  ASSERT_EQ(l.edges.size(), 24u);
  double to_hot = 0, to_other = 0;
  for (const auto& e : l.edges) {
    const auto& box = l.boxes[e.ps_box];
    (job.ps[box.members[0]].name == "ctr-ps-0" ? to_hot : to_other) +=
        e.bytes_per_second;
  }
  EXPECT_NEAR(to_hot / (to_hot + to_other), 0.85, 1e-9);
  EXPECT_DOUBLE_EQ(l.max_edge_bytes_per_second, 40e6 / 6 * 0.85);
}

TEST(LayoutTest, ManyLinksAreBundledPerNode) {
  JobView job = ViewOf({.ps = 20, .workers = 200, .nodes = 10});
  JobLayout l = LayoutJob(job);
  EXPECT_TRUE(l.bundled_edges);
  EXPECT_LE(l.edges.size(), 10u * 20u);
  double total = 0;
  for (const auto& e : l.edges) total += e.bytes_per_second;
  EXPECT_NEAR(total, 40e6, 1);
}

TEST(LayoutTest, BeyondTheLimitsTheJobIsSummarised) {
  const LayoutLimits lim;
  for (size_t nodes : {1, 4, 30}) {
    SCOPED_TRACE(nodes);
    JobView job =
        ViewOf({.ps = 30, .workers = 600, .nodes = nodes, .hot_share = 0.3});
    job.workers[7].marks.push_back({"straggler_worker", "warning"});
    JobLayout l = LayoutJob(job, lim);
    EXPECT_TRUE(l.summarised);
    ExpectTidy(job, l, lim);
    // Kept readable: a bounded number of boxes whatever the job's size.
    const size_t groups = l.groups.size();
    EXPECT_LE(l.boxes.size(),
              lim.summary_ps + groups + lim.summary_marked_workers + groups);
    bool straggler_kept = false, hot_kept = false;
    for (const auto& b : l.boxes) {
      if (b.summary) continue;
      if (!b.ps && b.members[0] == 7) straggler_kept = true;
      if (b.ps && job.ps[b.members[0]].name == "ctr-ps-0") hot_kept = true;
    }
    EXPECT_TRUE(straggler_kept);
    EXPECT_TRUE(hot_kept) << "the busiest PS keeps its own box";
  }
}

TEST(LayoutTest, SummaryKeepsAStalledJobsSuspect) {
  const LayoutLimits lim;
  JobView job = ViewOf({.ps = 4, .workers = 600, .nodes = 4});
  // More diagnosed workers than a summary keeps, the suspect last of them.
  for (size_t w = 0; w < lim.summary_marked_workers + 4; ++w) {
    job.workers[w].marks.push_back({"straggler_worker", "warning"});
  }
  job.workers[500].marks.push_back({"training_stalled", "critical"});
  JobLayout l = LayoutJob(job, lim);
  ASSERT_TRUE(l.summarised);
  ExpectTidy(job, l, lim);
  bool suspect_kept = false;
  for (const auto& b : l.boxes) {
    suspect_kept |= !b.ps && !b.summary && b.members[0] == 500;
  }
  EXPECT_TRUE(suspect_kept);
}

TEST(LayoutTest, EmptyAndPsLessJobs) {
  JobView none;
  JobLayout l = LayoutJob(none);
  EXPECT_TRUE(l.boxes.empty());
  EXPECT_TRUE(l.edges.empty());
  JobView allreduce = ViewOf({.ps = 0, .workers = 8});
  JobLayout a = LayoutJob(allreduce);
  EXPECT_EQ(a.boxes.size(), 8u);
  EXPECT_TRUE(a.edges.empty());
}

}  // namespace
}  // namespace trainscope::page

namespace trainscope::page {
namespace {

TEST(ModelTest, PodsInNaturalOrder) {
  JobView job = ModelOf(testing::SyntheticReport(
                            {testing::SyntheticJob({.ps = 11, .workers = 3})}))
                    .jobs.at(0);
  ASSERT_EQ(job.ps.size(), 11u);
  EXPECT_EQ(job.ps[2].name, "ctr-ps-2");
  EXPECT_EQ(job.ps[10].name, "ctr-ps-10");
}

}  // namespace
}  // namespace trainscope::page
