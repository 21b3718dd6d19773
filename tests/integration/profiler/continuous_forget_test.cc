// Privileged: the continuous profiler over a real pod cgroup. When a pod
// leaves, the symbol tables its processes brought in go with it at the next
// update, not minutes later: on a node whose pods come and go, what the
// cache held for them is the agent's memory that stays (docs/reliability.md,
// "Soaks").
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "kernel_pod.h"
#include "profiler/continuous_profiler.h"

namespace trainscope::testing {
namespace {

using namespace std::chrono_literals;

TEST(ContinuousProfilerForgetTest, APodThatLeftTakesItsSymbolsAlong) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  if (KernelPod::Unified().empty()) GTEST_SKIP() << "no cgroup v2 here";
  KernelPod pod;  // stops its busy loop and removes its cgroups
  pod.StartBusyLoop();

  PodInfo info;
  info.uid = pod.uid();
  info.namespace_name = "prof-forget";
  info.name = "pf-ps-0";
  info.training_job = "pf";
  info.role = Role::kPs;
  const PodList with_pod = {info};

  profiler::ContinuousProfiler continuous({.hz = 99});
  bool cached = false;
  for (int i = 0; i < 40 && !cached; ++i) {
    std::this_thread::sleep_for(250ms);
    const Status s = continuous.Update(with_pod);
    ASSERT_TRUE(s.ok()) << s.message();
    cached = continuous.symbol_cache().files_cached > 0;
  }
  ASSERT_TRUE(cached) << "no sample of the busy loop was symbolized";
  EXPECT_GT(continuous.symbol_cache().bytes_cached, 0u);

  // The pod is gone from the pod list (its process may linger a moment).
  ASSERT_TRUE(continuous.Update({}).ok());
  EXPECT_EQ(continuous.symbol_cache().files_cached, 0u);
  EXPECT_EQ(continuous.symbol_cache().bytes_cached, 0u);
}

}  // namespace
}  // namespace trainscope::testing
