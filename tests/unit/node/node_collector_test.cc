#include "node/node_collector.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace trainscope {
namespace {

namespace fs = std::filesystem;

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(NodeCollectorTest, ReadsCpuMemoryAndPhysicalNicsOnly) {
  fs::path root =
      fs::temp_directory_path() / ("node-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  HostPaths host{root / "proc", root / "sys", root / "cgroup"};
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  Write(host.proc / "stat", "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 1\ncpu1 1\n");
  Write(host.proc / "meminfo", "MemTotal: 1000 kB\nMemAvailable: 500 kB\n");
  Write(host.proc / "1" / "net" / "dev",
        "h|\nh|\n  eth0: 10 1 0 0 0 0 0 0 20 2 0 0 0 0 0 0\n"
        "  veth1: 99 1 0 0 0 0 0 0 99 2 0 0 0 0 0 0\n"
        "  eth1: 30 1 0 0 0 0 0 0 40 2 0 0 0 0 0 0\n");
  Write(host.sys / "class/net/eth0/speed", "10000\n");
  Write(host.sys / "class/net/eth0/device/vendor", "0x1af4\n");
  Write(host.sys / "class/net/eth1/speed", "-1\n");
  Write(host.sys / "class/net/eth1/device/vendor", "0x1af4\n");
  Write(host.sys / "class/net/veth1/speed", "10000\n");  // no device: virtual

  NodeCollector collector(host);
  Snapshot snap;
  CollectContext ctx{host, std::make_shared<PodList>()};
  ASSERT_TRUE(collector.Collect(ctx, snap).ok());
  EXPECT_DOUBLE_EQ(*snap.node.cpu_seconds_total, 200 / hz);
  EXPECT_DOUBLE_EQ(*snap.node.cpu_idle_seconds_total, 800 / hz);
  EXPECT_EQ(snap.node.cpu_count, 2u);
  EXPECT_EQ(snap.node.memory_total_bytes, 1000u * 1024);
  EXPECT_EQ(snap.node.memory_available_bytes, 500u * 1024);
  ASSERT_EQ(snap.node.nics.size(), 2u);
  EXPECT_EQ(snap.node.nics[0].device, "eth0");
  EXPECT_EQ(snap.node.nics[0].counters.transmit_bytes, 20u);
  EXPECT_EQ(snap.node.nics[0].speed_bytes_per_second, 10000 * 1e6 / 8);
  EXPECT_EQ(snap.node.nics[1].device, "eth1");
  EXPECT_FALSE(snap.node.nics[1].speed_bytes_per_second.has_value());
  fs::remove_all(root);
}

TEST(NodeCollectorTest, MissingProcIsAnErrorWithThePath) {
  HostPaths host{"/nonexistent/proc", "/nonexistent/sys", "/nonexistent"};
  NodeCollector collector(host);
  Snapshot snap;
  CollectContext ctx{host, std::make_shared<PodList>()};
  Status status = collector.Collect(ctx, snap);
  EXPECT_EQ(status.code(), Status::Code::kError);
  EXPECT_NE(status.message().find("/nonexistent/proc/stat"), std::string::npos);
}

}  // namespace
}  // namespace trainscope
