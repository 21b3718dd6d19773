// The flows collector against trainsim's ground truth (issue 4, "How it is
// tested": per-peer bytes within 2% over a run, and the hot PS's share of a
// round-robin hot-PS job within 0.02 of the truth).
//
// trainsim runs a small 2-PS / 3-worker job (one 1 MB embedding and three
// 50 KB dense variables, round_robin: fts-ps-0 holds 1.05 MB, fts-ps-1
// 100 KB) with the real agent (`--discovery apiserver` against trainsim's
// API, `--flows ebpf` or `--flows pcap` on the pods' host-side veths).
//
// What is compared, and over which window:
// - Bytes: trainsim's pod processes count the application payload they
//   write to and read from each peer's sockets (8-byte requests included).
//   TCP carries exactly those bytes, so the agent's
//   trainscope_peer_{transmit,receive}_payload_bytes_total (IP and TCP
//   headers excluded) are the matching notion; its IP-level counters are
//   only checked to be no smaller.
// - Window: `trainsim run --traffic-after-agent-ready` starts the pod
//   processes only once the agent is ready, lists every pod and has sampled
//   two more intervals, so the agent counts from the first byte. The pods
//   then run `duration_s`, drain and exit; `--ground-truth-json` writes the
//   final per-peer totals, and `--linger` keeps the node and the agent up
//   while the test waits for two agent cycles that started after the
//   traffic stopped and scrapes. The agent's first sample whose cycle began
//   (trainscope_last_sample_timestamp_seconds) after the traffic stopped
//   has drained every byte; both sides are totals over the whole traffic,
//   and the next sample must show the same counts.
// - Share: the agent's trainscope_ps_traffic_share_ratio is a rate over its
//   diagnosis window (N samples, N from the HELP text): only pairs present
//   at the window's start count, so the window cannot reach back before
//   the traffic. The test takes the last sample whose whole window lies
//   inside the steady traffic (checked from the scraped sample times,
//   trainscope_last_sample_timestamp_seconds) and compares it with the
//   truth share of the whole run: each PS's (sent + received) with the
//   workers over the sum for both PS. The traffic is stationary (10
//   steps/s per worker, each moving the same bytes per PS), so the window
//   (about 60 steps) differs from the run by a partial step at each edge,
//   < 0.003 in share.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent_process.h"
#include "cleanup.h"
#include "exec.h"
#include "layout.h"
#include "node.h"
#include "scenario.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr double kIntervalS = 3;   // agent --interval and scenario interval_s
constexpr double kDurationS = 11;  // seconds of traffic

std::string Scenario() {
  return R"({
  "name": "flows-trainsim-hot-ps", "duration_s": )" +
         std::to_string(kDurationS) + R"(, "interval_s": )" +
         std::to_string(kIntervalS) + R"(,
  "description": "2 PS / 3 workers, round_robin: fts-ps-0 holds the embedding",
  "jobs": [{"namespace": "training", "name": "fts", "labels": "kubeflow",
            "ps": 2, "workers": 3, "port": 2222, "step_ms": 100, "compute_ms": 2,
            "variables": [{"name": "embedding", "bytes": 1000000},
                          {"name": "dense", "bytes": 50000, "count": 3}],
            "placement": {"strategy": "round_robin"}}]
})";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One sample of the Prometheus text exposition.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses `name{k="v",...} value` lines (no escapes occur in these labels).
std::vector<Sample> ParseExposition(const std::string& text) {
  static const std::regex line_re(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$)");
  static const std::regex label_re(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)")re");
  std::vector<Sample> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) continue;
    Sample s;
    s.name = m[1];
    const std::string labels = m[3];
    for (std::sregex_iterator it(labels.begin(), labels.end(), label_re), end;
         it != end; ++it)
      s.labels[(*it)[1]] = (*it)[2];
    try {
      s.value = std::stod(m[4]);
    } catch (const std::exception&) {
      continue;
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<double> Find(const std::vector<Sample>& samples,
                           const std::string& name,
                           const std::map<std::string, std::string>& labels) {
  for (const Sample& s : samples) {
    if (s.name != name) continue;
    bool all = true;
    for (const auto& [k, v] : labels) {
      auto it = s.labels.find(k);
      all = all && it != s.labels.end() && it->second == v;
    }
    if (all) return s.value;
  }
  return std::nullopt;
}

// "over the last N samples" in the share gauge's HELP text.
// The samples the share gauge covers, from its HELP text ("over the last
// N samples" or "over the diagnosis window (N samples)").
std::optional<int> ShareWindowSamples(const std::string& text) {
  static const std::regex re(
      R"(# HELP trainscope_ps_traffic_share_ratio .*over the (last |diagnosis window \()(\d+) samples)");
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  return std::stoi(m[2]);
}

class FlowsTrainsimTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (netns, cgroups, BPF)";
    run_id_ = trainsim::NewRunId();
    dir_ = ::testing::TempDir() + "/flows-trainsim-" + run_id_;
    fs::create_directories(dir_);
    scenario_path_ = dir_ + "/scenario.json";
    std::ofstream(scenario_path_) << Scenario();
    truth_path_ = dir_ + "/truth.json";
  }

  void TearDown() override {
    if (run_id_.empty()) return;
    // The supervisor first (its teardown removes the node), then whatever
    // a crashed run left, by run id.
    if (trainsim_.pid() > 0) trainsim_.Stop(std::chrono::seconds(20));
    for (const std::string& l : trainsim::CleanupRun(run_id_, false))
      ADD_FAILURE() << "left: " << l;
    const auto ids = trainsim::LeftoverRunIds();
    EXPECT_EQ(std::count(ids.begin(), ids.end(), run_id_), 0)
        << "run " << run_id_ << " left things behind";
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string Log() const { return ReadFile(dir_ + "/trainsim.log"); }

  std::string run_id_, dir_, scenario_path_, truth_path_;
  trainsim::Subprocess trainsim_;
};

TEST_P(FlowsTrainsimTest, PeerBytesAndHotPsShareMatchGroundTruth) {
  const std::string mode = GetParam();
  const int port = FreePort();
  std::vector<std::string> args = {TRAINSIM_BIN,
                                   "run",
                                   "--scenario",
                                   scenario_path_,
                                   "--run-id",
                                   run_id_,
                                   "--agent",
                                   TRAINSCOPE_AGENT_BIN,
                                   "--agent-port",
                                   std::to_string(port),
                                   "--agent-arg=--flows=" + mode,
                                   "--traffic-after-agent-ready",
                                   "--ground-truth-json",
                                   truth_path_,
                                   "--linger",
                                   "60"};
  if (mode == "pcap") {
    // The pods' host-side veths: every packet crosses two of them (sender's
    // and receiver's); the collector counts each flow on one.
    const trainsim::Layout layout = trainsim::MakeLayout(
        trainsim::LoadScenarioFile(scenario_path_), run_id_);
    std::string ifaces;
    for (const trainsim::SimPod& p : layout.pods)
      ifaces += (ifaces.empty() ? "" : ",") + p.host_veth;
    args.push_back("--agent-arg=--pcap-interfaces=" + ifaces);
  }
  trainsim_ = trainsim::Subprocess::Spawn(args, dir_ + "/trainsim.log");

  // Scrape the agent every 200 ms for the whole run and keep, per sample
  // (trainscope_last_sample_timestamp_seconds, the time its cycle began),
  // the last exposition that rendered it: by then the cycle and the
  // diagnosis that computes the share are done.
  std::map<double, std::string> by_sample;
  auto poll = [&] {
    auto m = HttpGet(port, "/metrics");
    if (!m) return;
    auto ts = Find(ParseExposition(*m),
                   "trainscope_last_sample_timestamp_seconds", {});
    if (ts) by_sample[*ts] = std::move(*m);
  };
  const auto deadline = Clock::now() + std::chrono::seconds(150);
  while (!fs::exists(truth_path_)) {
    ASSERT_LT(Clock::now(), deadline) << "no ground truth in time\n" << Log();
    ASSERT_TRUE(trainsim_.Running())
        << "trainsim ended before the ground truth\n"
        << Log();
    poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const json truth = json::parse(ReadFile(truth_path_));
  const double start = truth["traffic_start_epoch_s"].get<double>();
  const double stop = truth["traffic_stop_epoch_s"].get<double>();
  ASSERT_TRUE(truth["consistent"].get<bool>()) << truth.dump(2);

  // The samples whose cycles began after the traffic stopped. The first
  // one normally holds every byte; in pcap mode the capture thread may still
  // be working through its buffer then (under ASan on two busy cores it
  // was 1 MB behind), so the counts are final at the first such sample the
  // next one repeats, within kSettleSamples.
  auto after_stop = [&](int nth) -> std::optional<double> {
    for (const auto& [ts, text] : by_sample)
      if (ts > stop && nth-- == 0) return ts;
    return std::nullopt;
  };
  auto payloads = [&](double ts) {
    std::map<std::string, double> out;
    for (const Sample& s : ParseExposition(by_sample[ts])) {
      if (!s.name.ends_with("_payload_bytes_total")) continue;
      std::string key = s.name;
      for (const auto& [k, v] : s.labels) key += "," + k + "=" + v;
      out[key] = s.value;
    }
    return out;
  };
  constexpr int kSettleSamples = 4;
  int settled = -1;
  for (int k = 0; settled < 0 && k < kSettleSamples; ++k) {
    while (!after_stop(k + 1)) {
      ASSERT_LT(Clock::now(), deadline) << "the agent stopped sampling\n"
                                        << Log();
      ASSERT_TRUE(trainsim_.Running()) << Log();
      poll();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (payloads(*after_stop(k)) == payloads(*after_stop(k + 1))) settled = k;
  }
  ASSERT_GE(settled, 0) << mode << ": payload counters still moving "
                        << kSettleSamples << " samples after the traffic";
  std::cout << "[" << mode << "] counts final " << settled
            << " sample(s) after the first one past the traffic\n";
  const double final_ts = *after_stop(settled);
  const std::string& text = by_sample[final_ts];
  const std::vector<Sample> metrics = ParseExposition(text);
  const std::vector<Sample> next =
      ParseExposition(by_sample[*after_stop(settled + 1)]);
  EXPECT_EQ(Find(metrics, "trainscope_flows_mode", {{"mode", mode}}),
            std::optional<double>(1))
      << text;

  // (1) Every (pod, peer) pair: payload bytes within 2% of the truth.
  const std::map<std::string, std::string> job = {{"namespace", "training"},
                                                  {"training_job", "fts"}};
  int pairs = 0;
  double worst = 0;
  std::ostringstream table;
  for (const auto& [pod, row] : truth["pods"].items()) {
    for (const auto& [peer, b] : row["peers"].items()) {
      for (const std::string dir : {"transmit", "receive"}) {
        const double want =
            b[dir == "transmit" ? "sent_bytes" : "received_bytes"]
                .get<double>();
        auto labels = job;
        labels["pod"] = pod;
        labels["peer_pod"] = peer;
        const auto payload = Find(
            metrics, "trainscope_peer_" + dir + "_payload_bytes_total", labels);
        const auto ip =
            Find(metrics, "trainscope_peer_" + dir + "_bytes_total", labels);
        ASSERT_TRUE(payload && ip) << mode << ": no " << dir << " series for "
                                   << pod << " -> " << peer << "\n"
                                   << text;
        ASSERT_GT(want, 0) << pod << " " << peer << " " << dir;
        const double err = *payload / want - 1;
        worst = std::max(worst, std::abs(err));
        char line[256];
        std::snprintf(line, sizeof line,
                      "  %-13s %-8s %-13s truth %11.0f  agent payload %11.0f "
                      "(%+.4f%%)  IP-level %11.0f\n",
                      pod.c_str(), dir.c_str(), peer.c_str(), want, *payload,
                      err * 100, *ip);
        table << line;
        EXPECT_NEAR(*payload, want, 0.02 * want)
            << mode << ": " << pod << " " << dir << " " << peer;
        // Final: the next sample holds the same count.
        EXPECT_EQ(Find(next, "trainscope_peer_" + dir + "_payload_bytes_total",
                       labels),
                  payload)
            << pod << " " << dir << " " << peer;
        EXPECT_GE(*ip, *payload) << pod << " " << dir << " " << peer;
        ++pairs;
      }
    }
  }
  // 2 PS x 3 workers, both ends, both directions.
  EXPECT_EQ(pairs, 24) << truth.dump(2);

  // (2) PS traffic share. The agent's share at a sample covers that sample
  // and the window - 1 before it; take the last sample whose window lies
  // inside the steady traffic: the oldest cycle began >= 1 s after the
  // pods started (connections up) and the newest >= 0.3 s before they were
  // told to stop (start + duration_s; the cycle's own time is ms).
  const auto window = ShareWindowSamples(text);
  ASSERT_TRUE(window) << "no share window in the HELP text\n" << text;
  std::vector<double> stamps;
  for (const auto& [ts, unused] : by_sample)
    if (ts <= start + kDurationS - 0.3) stamps.push_back(ts);
  ASSERT_GE(stamps.size(), static_cast<size_t>(*window))
      << "missed agent samples";
  const double newest = stamps.back();
  const double oldest = stamps[stamps.size() - *window];
  for (size_t i = stamps.size() - *window + 1; i < stamps.size(); ++i)
    ASSERT_LT(stamps[i] - stamps[i - 1], 1.5 * kIntervalS)
        << "a sample between two scrapes was missed";
  ASSERT_GE(oldest, start + 1.0)
      << "the agent's " << *window
      << "-sample share window does not fit inside the traffic: samples "
      << oldest << " .. " << newest << ", traffic from " << start;
  const std::vector<Sample> at_share = ParseExposition(by_sample[newest]);
  // The truth: each PS's bytes with the workers, both directions, over both
  // PS, for the whole run. The traffic is stationary (every worker step
  // moves the same bytes to and from each PS), so over the agent's window
  // (about 60 steps per worker) the true share differs from the run's by
  // at most a partial step at each edge: < 0.003.
  std::map<std::string, double> ps_bytes;
  double total = 0;
  for (const auto& [pod, row] : truth["pods"].items()) {
    if (row["role"] != "ps") continue;
    for (const auto& [peer, b] : row["peers"].items())
      ps_bytes[pod] +=
          b["sent_bytes"].get<double>() + b["received_bytes"].get<double>();
    total += ps_bytes[pod];
  }
  ASSERT_EQ(ps_bytes.size(), 2u);
  ASSERT_GT(total, 0);
  double worst_share = 0;
  for (const auto& [pod, bytes] : ps_bytes) {
    auto labels = job;
    labels["pod"] = pod;
    const auto share =
        Find(at_share, "trainscope_ps_traffic_share_ratio", labels);
    ASSERT_TRUE(share) << "no share for " << pod << "\n" << by_sample[newest];
    const double want = bytes / total;
    worst_share = std::max(worst_share, std::abs(*share - want));
    char line[256];
    std::snprintf(line, sizeof line,
                  "  share %s: truth %.5f  agent %.5f  (%+.5f; window %.1f .. "
                  "%.1f s into the traffic)\n",
                  pod.c_str(), want, *share, *share - want, oldest - start,
                  newest - start);
    table << line;
    EXPECT_NEAR(*share, want, 0.02) << mode << ": " << pod;
  }
  // The hot PS is the hot one.
  EXPECT_GT(ps_bytes["fts-ps-0"] / total, 0.85);
  std::printf(
      "[%s] traffic %.1f s; %d pair counters, worst payload error %.4f%%; "
      "worst share error %.5f\n%s",
      mode.c_str(), stop - start, pairs, worst * 100, worst_share,
      table.str().c_str());
  RecordProperty("worst_payload_error_percent", std::to_string(worst * 100));
  RecordProperty("worst_share_error", std::to_string(worst_share));

  // SIGTERM ends the linger: trainsim tears the node down and exits 0.
  const int status = trainsim_.Stop(std::chrono::seconds(30));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "status " << status << "\n"
      << Log();
  EXPECT_FALSE(fs::exists(trainsim::RunDir(run_id_)));
}

INSTANTIATE_TEST_SUITE_P(Modes, FlowsTrainsimTest,
                         ::testing::Values("ebpf", "pcap"),
                         [](const auto& param_info) {
                           return param_info.param;
                         });

}  // namespace
}  // namespace trainscope::testing
