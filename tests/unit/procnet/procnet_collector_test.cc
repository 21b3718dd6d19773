#include "procnet/procnet_collector.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace trainscope {
namespace {

namespace fs = std::filesystem;

class ProcNetCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("procnet-test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    host_.proc = root_ / "proc";
    Namespace(1, "net:[4026531840]");
  }
  void TearDown() override { fs::remove_all(root_); }

  void Namespace(int pid, const std::string& ns) {
    fs::create_directories(host_.proc / std::to_string(pid) / "ns");
    fs::create_symlink(ns, host_.proc / std::to_string(pid) / "ns" / "net");
  }
  void NetDev(int pid, const std::string& lines) {
    fs::create_directories(host_.proc / std::to_string(pid) / "net");
    std::ofstream(host_.proc / std::to_string(pid) / "net" / "dev")
        << "Inter-|   Receive |  Transmit\n face |bytes |bytes\n"
        << lines;
  }

  fs::path root_;
  HostPaths host_;
};

TEST_F(ProcNetCollectorTest, SumsPodInterfacesAndSkipsHostNetwork) {
  Namespace(100, "net:[4026532001]");
  NetDev(100,
         "    lo: 5 5 0 0 0 0 0 0 5 5 0 0 0 0 0 0\n"
         "  eth0: 1000 10 0 1 0 0 0 0 2000 20 0 0 0 0 0 0\n");
  Namespace(200, "net:[4026531840]");  // same as PID 1: host network
  NetDev(200, "  eth0: 7 7 0 0 0 0 0 0 7 7 0 0 0 0 0 0\n");

  auto pods = std::make_shared<PodList>();
  pods->push_back(PodInfo{.uid = "a"});
  pods->push_back(PodInfo{.uid = "b"});
  pods->push_back(PodInfo{.uid = "c", .host_network = true});
  Snapshot snap;
  snap.pod_samples["a"].pids = {99 /* exited */, 100};
  snap.pod_samples["b"].pids = {200};
  snap.pod_samples["c"].pids = {100};
  ProcNetCollector collector(host_);
  CollectContext ctx{host_, pods};
  ASSERT_TRUE(collector.Collect(ctx, snap).ok());

  ASSERT_TRUE(snap.pod_samples["a"].network.has_value());
  EXPECT_EQ(snap.pod_samples["a"].network->receive_bytes, 1000u);
  EXPECT_EQ(snap.pod_samples["a"].network->transmit_bytes, 2000u);
  EXPECT_EQ(snap.pod_samples["a"].network->receive_drops, 1u);
  EXPECT_FALSE(snap.pod_samples["a"].host_network);
  EXPECT_TRUE(snap.pod_samples["b"].host_network);
  EXPECT_FALSE(snap.pod_samples["b"].network.has_value());
  EXPECT_TRUE(snap.pod_samples["c"].host_network);
  EXPECT_FALSE(snap.pod_samples["c"].network.has_value());
}

TEST_F(ProcNetCollectorTest, ErrorWhenNoPodIsReadable) {
  Snapshot snap;
  snap.pod_samples["a"].pids = {4242};
  ProcNetCollector collector(host_);
  CollectContext ctx{host_, std::make_shared<PodList>()};
  Status status = collector.Collect(ctx, snap);
  EXPECT_EQ(status.code(), Status::Code::kError);
  EXPECT_NE(status.message().find(host_.proc.string()), std::string::npos);
}

TEST_F(ProcNetCollectorTest, NoPodsIsFine) {
  Snapshot snap;
  ProcNetCollector collector(host_);
  CollectContext ctx{host_, std::make_shared<PodList>()};
  EXPECT_TRUE(collector.Collect(ctx, snap).ok());
}

}  // namespace
}  // namespace trainscope
