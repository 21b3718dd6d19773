// The cgroup reader's budget of descriptors kept open between cycles: it
// stays within the soft open-file limit, raised toward the hard limit.
#include "cgroup/open_file_budget.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace trainscope {
namespace {

// Moves the soft open-file limit for one test and restores it after; the
// hard limit is never touched (lowering it could not be undone).
class FileLimit {
 public:
  FileLimit() { ::getrlimit(RLIMIT_NOFILE, &saved_); }
  ~FileLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  bool Set(rlim_t soft) {
    rlimit rl = saved_;
    rl.rlim_cur = soft;
    return ::setrlimit(RLIMIT_NOFILE, &rl) == 0;
  }
  rlim_t Soft() const {
    rlimit rl{};
    ::getrlimit(RLIMIT_NOFILE, &rl);
    return rl.rlim_cur;
  }
  const rlimit& saved() const { return saved_; }

 private:
  rlimit saved_{};
};

TEST(OpenFileBudget, TakesAndGivesBack) {
  OpenFileBudget budget(2);
  EXPECT_TRUE(budget.Take());
  EXPECT_TRUE(budget.Take());
  EXPECT_FALSE(budget.Take());
  budget.Give();
  EXPECT_EQ(budget.left(), 1u);
}

TEST(OpenFileBudget, RaisesTheSoftLimitTowardTheHardOne) {
  FileLimit limit;
  if (limit.saved().rlim_max != RLIM_INFINITY &&
      limit.saved().rlim_max < 2048) {
    GTEST_SKIP() << "hard open-file limit below 2048";
  }
  ASSERT_TRUE(limit.Set(512));
  const auto budget = OpenFileBudget::FromFileLimit(1000, 200);
  EXPECT_EQ(budget.left(), 1000u);
  EXPECT_GE(limit.Soft(), 1200u);
}

TEST(OpenFileBudget, KeepsTheReserveWhenTheHardLimitIsLow) {
  FileLimit limit;
  const rlim_t hard = limit.saved().rlim_max;
  if (hard == RLIM_INFINITY || hard > 1u << 20)
    GTEST_SKIP() << "no low hard limit";
  // Asks for more than the hard limit allows: the reserve stays free.
  const auto budget = OpenFileBudget::FromFileLimit(hard, 100);
  EXPECT_EQ(budget.left(), static_cast<size_t>(hard) - 100);
  EXPECT_EQ(limit.Soft(), hard);
}

TEST(OpenFileBudget, NothingWhenTheLimitIsBelowTheReserve) {
  FileLimit limit;
  ASSERT_TRUE(limit.Set(64));
  // Even raised to the hard limit, the soft limit cannot hold the reserve.
  const rlim_t hard = limit.saved().rlim_max;
  if (hard == RLIM_INFINITY) GTEST_SKIP() << "unlimited hard limit";
  const auto budget =
      OpenFileBudget::FromFileLimit(10, static_cast<size_t>(hard) + 1);
  EXPECT_EQ(budget.left(), 0u);
}

}  // namespace
}  // namespace trainscope
