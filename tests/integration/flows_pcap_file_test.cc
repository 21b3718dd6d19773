// Privileged: `trainscope flows --read` on a headers-only capture written by
// tcpdump during an iperf3 run between two netns pods gives the per-flow
// frames and bytes that tshark (an independent dissector) reports.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "flows_lab.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Frames and bytes of one direction.
struct Side {
  uint64_t frames = 0;
  double bytes = 0;
  double unit = 1;  // tshark rounds to its display unit (kB, MB: SI)
};

// tshark -z conv,tcp rows by the unordered endpoint pair "a|b" (sorted).
std::map<std::string, std::pair<Side, Side>> TsharkConversations(
    const std::string& text) {
  std::map<std::string, std::pair<Side, Side>> out;
  static const std::regex row(
      R"(^(\S+)\s+<->\s+(\S+)\s+(\d+)\s+([\d.]+)\s+(bytes|kB|MB|GB)\s+(\d+)\s+([\d.]+)\s+(bytes|kB|MB|GB))");
  auto unit = [](const std::string& u) {
    return u == "bytes" ? 1.0 : u == "kB" ? 1e3 : u == "MB" ? 1e6 : 1e9;
  };
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    std::string a = m[1], b = m[2];
    Side left{std::stoull(m[3]), std::stod(m[4]) * unit(m[5]), unit(m[5])};
    Side right{std::stoull(m[6]), std::stod(m[7]) * unit(m[8]), unit(m[8])};
    out[a < b ? a + "|" + b : b + "|" + a] = {left, right};
  }
  return out;
}

class FlowsPcapFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    for (const char* tool : {"iperf3", "tcpdump", "tshark"}) {
      ASSERT_TRUE(Sh(std::string("command -v ") + tool)) << tool << " missing";
    }
    dir_ = fs::temp_directory_path() /
           ("trainscope-flows-pcap-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(FlowsPcapFileTest, ReadMatchesTsharkConversations) {
  NetnsLab lab(2);
  const std::string capture = (dir_ / "run.pcap").string();
  {
    // Headers only (-s 128): byte counts must come from the wire length.
    const std::string tcpdump_log = (dir_ / "tcpdump.log").string();
    ChildProcess tcpdump({"tcpdump", "-i", lab.host_veth(0), "-s", "128", "-U",
                          "-w", capture, "tcp", "port", "2222"},
                         tcpdump_log);
    // tcpdump says "listening on" once its capture and filter are active.
    const auto listening = [&] {
      return Slurp(tcpdump_log).find("listening on") != std::string::npos;
    };
    for (int i = 0; i < 500 && !listening(); ++i)
      std::this_thread::sleep_for(20ms);
    ASSERT_TRUE(listening()) << Slurp(tcpdump_log);
    ChildProcess server({"ip", "netns", "exec", lab.netns(1), "iperf3", "-s",
                         "-1", "-p", "2222", "-B", lab.ip(1)},
                        (dir_ / "server.log").string());
    ASSERT_TRUE(WaitListening(server.pid(), 2222, 10s))
        << Slurp((dir_ / "server.log").string());
    ChildProcess client(
        {"ip", "netns", "exec", lab.netns(0), "iperf3", "-c", lab.ip(1), "-p",
         "2222", "-t", "1", "-P", "2", "--connect-timeout", "3000"},
        (dir_ / "client.log").string());
    ASSERT_EQ(client.Wait(20s), std::optional<int>(0))
        << Slurp((dir_ / "client.log").string());
    server.Wait(5s);
    std::this_thread::sleep_for(300ms);
    tcpdump.Signal(SIGINT);
    ASSERT_TRUE(tcpdump.Wait(10s).has_value());
  }
  ASSERT_TRUE(fs::exists(capture));

  ChildProcess cli({TRAINSCOPE_CLI_BIN, "flows", "--read", capture, "--json"},
                   (dir_ / "cli.json").string());
  ASSERT_EQ(cli.Wait(30s), std::optional<int>(0))
      << Slurp((dir_ / "cli.json").string());
  auto ours = nlohmann::json::parse(Slurp((dir_ / "cli.json").string()));
  auto theirs =
      TsharkConversations(ShOut("tshark -r " + capture + " -q -z conv,tcp"));
  // iperf3: one control connection and two data streams (-P 2).
  ASSERT_EQ(ours["flows"].size(), 3u) << ours.dump(2);
  ASSERT_EQ(theirs.size(), 3u);
  uint64_t data_bytes = 0;
  for (const auto& f : ours["flows"]) {
    const std::string a = f["a"], b = f["b"];
    auto it = theirs.find(a < b ? a + "|" + b : b + "|" + a);
    ASSERT_NE(it, theirs.end()) << a << " <-> " << b;
    Side ab{f["a_to_b"]["frames"].get<uint64_t>(),
            f["a_to_b"]["bytes"].get<double>()};
    Side ba{f["b_to_a"]["frames"].get<uint64_t>(),
            f["b_to_a"]["bytes"].get<double>()};
    // tshark's column order depends on its own notion of A and B; take the
    // assignment of its two columns that matches, then check it.
    auto [t1, t2] = it->second;
    auto same = [](const Side& mine, const Side& tshark) {
      return mine.frames == tshark.frames &&
             std::abs(mine.bytes / tshark.unit - tshark.bytes / tshark.unit) <=
                 1.0;
    };
    if (!(same(ab, t1) && same(ba, t2))) std::swap(t1, t2);
    EXPECT_EQ(t1.frames, ab.frames) << a << " <-> " << b;
    EXPECT_EQ(t2.frames, ba.frames) << a << " <-> " << b;
    EXPECT_NEAR(ab.bytes / t1.unit, t1.bytes / t1.unit, 1.0) << a;
    EXPECT_NEAR(ba.bytes / t2.unit, t2.bytes / t2.unit, 1.0) << a;
    data_bytes += f["bytes"].get<uint64_t>();
  }
  // Exact byte totals per direction from tshark's frame lengths.
  std::map<std::string, uint64_t> exact;
  std::istringstream fields(
      ShOut("tshark -r " + capture + " -T fields -e tcp.srcport -e frame.len"));
  std::string port;
  uint64_t len;
  while (fields >> port >> len) exact[port] += len;
  uint64_t ours_by_src_total = 0;
  for (const auto& f : ours["flows"]) {
    const std::string a = f["a"], b = f["b"];
    const std::string a_port = a.substr(a.rfind(':') + 1);
    const std::string b_port = b.substr(b.rfind(':') + 1);
    // Client ports are unique per flow; port 2222 is shared by all, so only
    // compare the client side's sent bytes exactly.
    const bool a_is_client = a_port != "2222";
    const auto& side = a_is_client ? f["a_to_b"] : f["b_to_a"];
    EXPECT_EQ(side["bytes"].get<uint64_t>(),
              exact[a_is_client ? a_port : b_port])
        << a << " <-> " << b;
    ours_by_src_total += f["bytes"].get<uint64_t>();
  }
  uint64_t tshark_total = 0;
  for (const auto& [p, b] : exact) tshark_total += b;
  EXPECT_EQ(ours_by_src_total, tshark_total);
  EXPECT_GT(data_bytes, 10'000'000u);
}

TEST(FlowsCli, MissingFileIsAClearError) {
  const std::string out =
      "/tmp/trainscope-flows-cli-" + std::to_string(::getpid()) + ".txt";
  ChildProcess cli({TRAINSCOPE_CLI_BIN, "flows", "--read", "/nonexistent.pcap"},
                   out);
  EXPECT_EQ(cli.Wait(10s), std::optional<int>(1));
  EXPECT_NE(Slurp(out).find("cannot read /nonexistent.pcap"), std::string::npos)
      << Slurp(out);
  fs::remove(out);
}

}  // namespace
}  // namespace trainscope::testing
