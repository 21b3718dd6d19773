#include <gtest/gtest.h>

#include <set>
#include <string>

#include "diagnosis/detectors.h"

namespace trainscope::diagnosis {
namespace {

TEST(DetectorRegistryTest, EveryKindOnceWithAFunction) {
  std::set<std::string_view> kinds;
  for (const DetectorEntry& d : Detectors()) {
    EXPECT_FALSE(d.kind.empty());
    EXPECT_NE(d.detect, nullptr) << d.kind;
    EXPECT_TRUE(kinds.insert(d.kind).second) << d.kind << " registered twice";
  }
  EXPECT_TRUE(kinds.contains(kHotParameterServer));
  EXPECT_TRUE(kinds.contains(kAllreduceSlowLink));
}

TEST(DetectorRegistryTest, ScopeComesFromTheRegistry) {
  // Judged by comparing a job's pods: the cluster view keeps whole jobs.
  for (auto kind : {kHotParameterServer, kStragglerWorker, kInputIoBound,
                    kAllreduceStraggler, kAllreduceSlowLink}) {
    EXPECT_TRUE(JudgesWholeJob(kind)) << kind;
  }
  for (auto kind : {kPsCpuSaturated, kCpuThrottled, kNetworkSaturated,
                    kMemoryPressure, kGpuUnderutilized}) {
    EXPECT_FALSE(JudgesWholeJob(kind)) << kind;
  }
  EXPECT_FALSE(JudgesWholeJob("no_such_kind"));
}

TEST(DetectorRegistryTest, AnEmptyWindowFindsNothing) {
  // Every detector runs over no pods without throwing or inventing one.
  WindowStats recent;
  std::vector<JobTraffic> jobs;
  EXPECT_TRUE(
      RunDetectors({recent, recent, jobs, jobs}, DiagnosisSettings{}).empty());
}

}  // namespace
}  // namespace trainscope::diagnosis
