#include "trainscope/snapshot_parts.h"

#include <gtest/gtest.h>

#include <string>

#include "trainscope/snapshot.h"

namespace trainscope {
namespace {

struct HealthPart {
  std::string mode;
};
struct OtherPart {
  int value = 0;
};

TEST(SnapshotPartsTest, AbsentUntilStoredThenByType) {
  Snapshot s;
  EXPECT_EQ(s.parts.Get<HealthPart>(), nullptr);
  s.parts.Put(HealthPart{"ebpf"});
  ASSERT_NE(s.parts.Get<HealthPart>(), nullptr);
  EXPECT_EQ(s.parts.Get<HealthPart>()->mode, "ebpf");
  // Another collector's part is its own.
  EXPECT_EQ(s.parts.Get<OtherPart>(), nullptr);
  s.parts.Put(OtherPart{7});
  EXPECT_EQ(s.parts.Get<OtherPart>()->value, 7);
  EXPECT_EQ(s.parts.Get<HealthPart>()->mode, "ebpf");
}

TEST(SnapshotPartsTest, PutReplacesAndCopiesKeepWhatTheySaw) {
  Snapshot first;
  first.parts.Put(HealthPart{"ebpf"});
  const Snapshot published = first;  // the history keeps copies
  first.parts.Put(HealthPart{"pcap"});
  EXPECT_EQ(first.parts.Get<HealthPart>()->mode, "pcap");
  EXPECT_EQ(published.parts.Get<HealthPart>()->mode, "ebpf");
}

}  // namespace
}  // namespace trainscope
