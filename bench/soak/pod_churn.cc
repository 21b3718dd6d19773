// Pod churn soak (issue 15): the real agent against the fake Kubernetes API
// server while pods are created and deleted, each with a real cgroup and a
// process sending UDP to a network namespace of the run. Before the churn a
// baseline of the agent's RSS, live heap, open fds, `trainscope_` series
// and BPF map entries; every --sample seconds the same figures plus the
// series that still name a deleted pod once the agent had time to see the
// deletion; at the end, after the diagnosis history rolled over, the
// comparison. Exit 0 when no deleted pod's series was seen, fds and the
// entries of every map returned to the baseline, the live heap grew by at
// most --heap-tolerance-mib and RSS by at most --rss-tolerance-mib.
// docs/reliability.md, "Soaks".
//
//   sudo pod_churn [--pods 1000] [--duration 600] [--alive 50]
//        [--interval 5] [--sample 10] [--history N] [--lru-may-keep]
//        [--heap-tolerance-mib 1] [--rss-tolerance-mib 5]
//        [--malloc-trim-probe] [--out FILE] [--agent BIN]
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "agent_probe.h"
#include "agents.h"
#include "churn_pods.h"
#include "exec.h"
#include "exposition.h"
#include "fake_apiserver.h"
#include "layout.h"
#include "peer_netns.h"

namespace trainscope::soak {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::atomic<bool> g_stop{false};

struct Options {
  std::string agent = TRAINSCOPE_AGENT_BIN;
  int pods = 1000;
  double duration_s = 600;
  int alive = 50;
  double interval_s = 5;
  double sample_s = 10;
  // A leak grows the live heap, judged to 1 MiB. RSS also keeps what glibc
  // cannot return: freed heap in pages that still hold a live chunk
  // (3.4-4.4 MiB after churns of 300 and 1,000 pods, whatever the arena and
  // mmap settings, with the live heap back within 0.4 MiB;
  // docs/reliability.md, "Soaks").
  double rss_tolerance_mib = 5;
  double heap_tolerance_mib = 1;
  int history = 0;  // 0: the agent's default
  bool traffic = true;
  bool lru_may_keep = false;
  bool malloc_trim_probe = false;
  std::string out;
};

// The agent's --history default, from its --help (one place for the number).
int AgentDefaultHistory(const std::string& agent) {
  const std::string help = trainsim::RunCommand({agent, "--help"}).output;
  std::smatch m;
  static const std::regex re(R"(--history INT:INT in \[[0-9 -]+\]=([0-9]+))");
  if (!std::regex_search(help, m, re))
    throw std::runtime_error("no --history default in " + agent + " --help");
  return std::stoi(m[1]);
}

// One look at the agent.
struct Sample {
  double t = 0;
  size_t alive = 0;
  size_t deleted = 0;
  ProcessUsage usage;
  // The allocator's live and kept-free bytes, from the agent's own gauges;
  // -1 when it does not export them.
  double heap_in_use = -1;
  double heap_free = -1;
  size_t series = 0;
  size_t series_of_gone = 0;  // deleted more than `settle` seconds ago
  std::vector<std::string> examples;
  std::vector<BpfMapCount> maps;
};

json MapsJson(const std::vector<BpfMapCount>& maps) {
  json out = json::object();
  for (const BpfMapCount& m : maps) {
    out[m.name + "#" + std::to_string(m.id)] = {{"type", m.type_name},
                                                {"max_entries", m.max_entries},
                                                {"entries", m.entries},
                                                {"lru", m.lru}};
  }
  return out;
}

json SampleJson(const Sample& s) {
  return {{"t", s.t},
          {"alive", s.alive},
          {"deleted", s.deleted},
          {"rss_bytes", s.usage.rss_bytes},
          {"rss_anon_bytes", s.usage.rss_anon_bytes},
          {"rss_file_bytes", s.usage.rss_file_bytes},
          {"heap_in_use_bytes", s.heap_in_use},
          {"heap_free_bytes", s.heap_free},
          {"open_fds", s.usage.open_fds},
          {"series", s.series},
          {"series_of_deleted_pods", s.series_of_gone},
          {"examples", s.examples},
          {"bpf_maps", MapsJson(s.maps)}};
}

class ChurnRun {
 public:
  ChurnRun(const Options& o, ChurnPods& pods, pid_t agent, int port)
      : o_(o), pods_(pods), agent_(agent), port_(port) {
    // One sampling interval for the agent to drop the pod, one more for a
    // watch event that lands just after a sample, and slack for the scrape.
    settle_s_ = 2 * o.interval_s + 2;
    start_ = Clock::now();
  }

  double Elapsed() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }

  // The agent's figures now; deleted pods count once older than `settle`.
  std::optional<Sample> Take() {
    Sample s;
    s.t = Elapsed();
    s.alive = pods_.alive();
    s.deleted = pods_.deleted().size();
    std::set<std::string> gone;
    const double now =
        std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
    for (const auto& [name, when] : pods_.deleted()) {
      if (now - when < settle_s_) continue;
      gone.insert(name);
      gone.insert(pods_.uid_of().at(name));
    }
    auto metrics = HttpGet(port_, "/metrics");
    auto usage = ReadProcessUsage(agent_);
    if (!metrics || !usage) return std::nullopt;
    SeriesCount c = CountSeries(*metrics, gone);
    s.series = c.total;
    s.series_of_gone = c.of_gone;
    s.examples = c.examples;
    s.usage = *usage;
    s.heap_in_use =
        testing::MetricValue(*metrics, "trainscope_agent_heap_in_use_bytes", {})
            .value_or(-1);
    s.heap_free =
        testing::MetricValue(*metrics, "trainscope_agent_heap_free_bytes", {})
            .value_or(-1);
    s.maps = AgentBpfMaps(agent_);
    return s;
  }

  void Print(const Sample& s) {
    int64_t pod_cgroups = -1, peer_flows = -1;
    for (const auto& m : s.maps) {
      if (m.name == "pod_cgroups") pod_cgroups = m.entries;
      if (m.name == "peer_flows") peer_flows = m.entries;
    }
    std::fprintf(
        stderr,
        "t=%6.0fs alive=%3zu deleted=%4zu rss=%6.1f MiB heap=%5.1f+%4.1f MiB "
        "fds=%3d series=%5zu of-deleted=%zu pod_cgroups=%lld "
        "peer_flows=%lld\n",
        s.t, s.alive, s.deleted, s.usage.rss_bytes / 1048576.0,
        s.heap_in_use / 1048576.0, s.heap_free / 1048576.0, s.usage.open_fds,
        s.series, s.series_of_gone, static_cast<long long>(pod_cgroups),
        static_cast<long long>(peer_flows));
  }

  // Creates pod k at k * spacing and deletes it `lifetime` later, so about
  // --alive pods live at once and the last one goes at --duration.
  bool Churn(std::vector<Sample>* samples) {
    const double lifetime = o_.pods > o_.alive
                                ? o_.alive * o_.duration_s / o_.pods
                                : o_.duration_s / 2;
    const double spacing = (o_.duration_s - lifetime) / o_.pods;
    std::deque<std::pair<double, std::string>> dying;
    int next = 0;
    double next_sample = o_.sample_s;
    const double t0 = Elapsed();
    while (!g_stop && (next < o_.pods || !dying.empty())) {
      const double t = Elapsed() - t0;
      while (next < o_.pods && next * spacing <= t) {
        dying.emplace_back(next * spacing + lifetime, pods_.Create(next));
        ++next;
      }
      while (!dying.empty() && dying.front().first <= t) {
        pods_.Delete(dying.front().second);
        dying.pop_front();
      }
      if (t >= next_sample) {
        auto s = Take();
        if (!s) return false;
        Print(*s);
        samples->push_back(std::move(*s));
        next_sample += o_.sample_s;
      }
      double wake = next_sample;
      if (next < o_.pods) wake = std::min(wake, next * spacing);
      if (!dying.empty()) wake = std::min(wake, dying.front().first);
      const double nap = std::clamp(wake - (Elapsed() - t0), 0.0, 0.2);
      std::this_thread::sleep_for(std::chrono::duration<double>(nap));
    }
    return !g_stop;
  }

  // Looks at the agent every --sample seconds for `seconds`.
  bool Watch(double seconds, std::vector<Sample>* samples) {
    const double end = Elapsed() + seconds;
    while (!g_stop && Elapsed() < end) {
      const double nap = std::min(o_.sample_s, end - Elapsed());
      std::this_thread::sleep_for(std::chrono::duration<double>(nap));
      auto s = Take();
      if (!s) return false;
      Print(*s);
      samples->push_back(std::move(*s));
    }
    return !g_stop;
  }

  double settle_s() const { return settle_s_; }

 private:
  const Options& o_;
  ChurnPods& pods_;
  pid_t agent_;
  int port_;
  double settle_s_ = 0;
  Clock::time_point start_;
};

void Sleep(double seconds) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (!g_stop && Clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

int64_t Entries(const std::vector<BpfMapCount>& maps, const std::string& name,
                bool lru) {
  int64_t n = 0;
  for (const BpfMapCount& m : maps)
    if (m.name == name && m.lru == lru && m.entries > 0) n += m.entries;
  return n;
}

// Whether the end sample is back at the baseline: fds, and every map's
// entries, the LRU flow maps included (the agent deletes a departed pod's
// entries; before it did, they waited for the kernel's LRU eviction:
// --lru-may-keep judges such an agent on its other maps).
std::vector<std::string> Regressions(const Sample& base, const Sample& end,
                                     const Options& o) {
  std::vector<std::string> out;
  if (end.series_of_gone > 0)
    out.push_back(std::to_string(end.series_of_gone) +
                  " series of deleted pods remain");
  if (end.usage.open_fds > base.usage.open_fds)
    out.push_back("open fds " + std::to_string(base.usage.open_fds) + " -> " +
                  std::to_string(end.usage.open_fds));
  std::set<std::pair<std::string, bool>> names;
  for (const auto& m : end.maps)
    if (m.entries >= 0 && (!m.lru || !o.lru_may_keep))
      names.insert({m.name, m.lru});
  for (const auto& [n, lru] : names) {
    const int64_t b = Entries(base.maps, n, lru);
    const int64_t e = Entries(end.maps, n, lru);
    if (e > b)
      out.push_back("BPF map " + n + ": " + std::to_string(b) + " -> " +
                    std::to_string(e) + " entries");
  }
  const double growth_mib =
      (static_cast<double>(end.usage.rss_bytes) - base.usage.rss_bytes) /
      1048576.0;
  char buf[128];
  if (growth_mib > o.rss_tolerance_mib) {
    std::snprintf(buf, sizeof buf, "RSS grew %.1f MiB (tolerance %.1f)",
                  growth_mib, o.rss_tolerance_mib);
    out.push_back(buf);
  }
  // Live heap: what a leak grows, whatever the allocator keeps besides.
  const double heap_growth_mib =
      (end.heap_in_use - base.heap_in_use) / 1048576.0;
  if (base.heap_in_use >= 0 && end.heap_in_use >= 0 &&
      heap_growth_mib > o.heap_tolerance_mib) {
    std::snprintf(buf, sizeof buf, "heap in use grew %.2f MiB (tolerance %.1f)",
                  heap_growth_mib, o.heap_tolerance_mib);
    out.push_back(buf);
  }
  return out;
}

void PrintTable(const Sample& base, const Sample& end, size_t max_gone) {
  const double mib = 1048576.0;
  std::printf("%-34s %12s %12s\n", "", "baseline", "end");
  std::printf("%-34s %12.1f %12.1f\n", "RSS (MiB)", base.usage.rss_bytes / mib,
              end.usage.rss_bytes / mib);
  std::printf("%-34s %12.1f %12.1f\n", "  anonymous (MiB)",
              base.usage.rss_anon_bytes / mib, end.usage.rss_anon_bytes / mib);
  std::printf("%-34s %12.1f %12.1f\n", "  file pages (MiB)",
              base.usage.rss_file_bytes / mib, end.usage.rss_file_bytes / mib);
  std::printf("%-34s %12.2f %12.2f\n", "heap in use (MiB)",
              base.heap_in_use / mib, end.heap_in_use / mib);
  std::printf("%-34s %12.2f %12.2f\n", "heap kept free (MiB)",
              base.heap_free / mib, end.heap_free / mib);
  std::printf("%-34s %12d %12d\n", "open fds", base.usage.open_fds,
              end.usage.open_fds);
  std::printf("%-34s %12zu %12zu\n", "trainscope_ series", base.series,
              end.series);
  std::printf("%-34s %12s %12zu\n", "series of deleted pods", "-",
              end.series_of_gone);
  std::printf("%-34s %12s %12zu\n", "  most at any sample (settled)", "-",
              max_gone);
  std::set<std::pair<std::string, bool>> names;
  for (const auto& m : end.maps)
    if (m.entries >= 0) names.insert({m.name, m.lru});
  for (const auto& [n, lru] : names) {
    std::printf("%-34s %12lld %12lld\n",
                ("BPF " + n + (lru ? " (LRU)" : "")).c_str(),
                static_cast<long long>(Entries(base.maps, n, lru)),
                static_cast<long long>(Entries(end.maps, n, lru)));
  }
}

trainsim::Subprocess StartAgent(const Options& o,
                                const testing::FakeApiServer& api,
                                ChurnPods& pods, const std::string& node,
                                int port, int history, const std::string& log) {
  char interval[32];
  std::snprintf(interval, sizeof interval, "%g", o.interval_s);
  return trainsim::Subprocess::Spawn(
      {o.agent, "--discovery", "apiserver", "--kube-api", api.url(),
       "--node-name", node, "--listen", "127.0.0.1:" + std::to_string(port),
       "--interval", interval, "--cgroup2-path", pods.Cgroup2Slice(),
       "--history", std::to_string(history)},
      log);
}

bool WaitReady(int port, trainsim::Subprocess& agent) {
  for (int i = 0; i < 300 && !g_stop && agent.Running(); ++i) {
    if (HttpGet(port, "/readyz")) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// A few samples and scrapes, so buffers that live for the whole process are
// in the baseline.
void WarmUp(int port, double interval_s) {
  for (int i = 0; i < 5 && !g_stop; ++i) {
    HttpGet(port, "/metrics");
    HttpGet(port, "/api/v1/report");
    Sleep(std::max(1.0, interval_s));
  }
}

// What the run saw, baseline to end.
struct Observed {
  Sample base, settled, end;
  std::vector<Sample> samples;  // during the churn and the history drain
  double churn_s = 0;
  double drain_s = 0;
  size_t max_gone = 0;  // most series of deleted pods at any sample
};

// The last deletions settle (series checked); the diagnosis history still
// holds the deleted pods until it has rolled over, so memory is judged
// after interval x history more; then up to a minute for fds and maps (a
// scrape's connection, a profiler drain) to come back.
bool SettleAndJudge(ChurnRun& run, const Options& o, int history,
                    Observed& seen, std::vector<std::string>& regressions) {
  Sleep(run.settle_s());
  auto settled = run.Take();
  if (!settled) return false;
  seen.settled = *settled;
  run.Print(seen.settled);
  seen.drain_s = o.interval_s * (history + 2);
  std::fprintf(stderr, "pod_churn: %.0f s for the history to roll over\n",
               seen.drain_s);
  if (!run.Watch(seen.drain_s, &seen.samples)) return false;
  std::optional<Sample> end;
  for (int i = 0; i < 12 && !g_stop; ++i) {
    end = run.Take();
    if (!end) break;
    regressions = Regressions(seen.base, *end, o);
    if (regressions.empty()) break;
    Sleep(5);
  }
  if (!end) return false;
  seen.end = *end;
  run.Print(seen.end);
  seen.max_gone = seen.settled.series_of_gone;
  for (const Sample& s : seen.samples)
    seen.max_gone = std::max(seen.max_gone, s.series_of_gone);
  if (seen.max_gone > 0)
    regressions.push_back("up to " + std::to_string(seen.max_gone) +
                          " series of deleted pods during the churn");
  return true;
}

// Diagnosis only, after the verdict: how much of the RSS growth is freed
// heap that glibc keeps (malloc_trim returns it) rather than live data.
json MallocTrimProbe(int pid) {
  const auto r =
      trainsim::RunCommand({"gdb", "-p", std::to_string(pid), "-batch", "-ex",
                            "call (int)malloc_trim(0)"},
                           std::chrono::seconds(120));
  const auto u = ReadProcessUsage(pid);
  if (!u || r.exit_code != 0) return nullptr;
  std::printf("%-34s %12s %12.1f\n", "RSS after malloc_trim (MiB)", "-",
              u->rss_bytes / 1048576.0);
  return {{"rss_bytes", u->rss_bytes},
          {"rss_anon_bytes", u->rss_anon_bytes},
          {"rss_file_bytes", u->rss_file_bytes}};
}

json MethodJson(const Options& o, const ChurnRun& run, int history,
                double drain_s) {
  return {{"pods", o.pods},
          {"duration_s", o.duration_s},
          {"alive_at_once", o.alive},
          {"agent_interval_s", o.interval_s},
          {"sample_interval_s", o.sample_s},
          {"settle_s", run.settle_s()},
          {"history", history},
          {"history_drain_s", drain_s},
          {"lru_may_keep", o.lru_may_keep},
          {"rss_tolerance_mib", o.rss_tolerance_mib},
          {"heap_tolerance_mib", o.heap_tolerance_mib},
          {"traffic", o.traffic ? "one 256-byte UDP datagram a second per pod "
                                  "to a veth peer in a namespace of the run"
                                : "none"},
          {"api", "tests/support FakeApiServer (list/watch)"},
          {"cgroups",
           "kubelet systemd layout under trainscope-soak-<run>.slice "
           "in every hierarchy; --cgroup2-path on it"}};
}

json ResultJson(const Options& o, const ChurnRun& run, int history,
                const Observed& seen, json trimmed,
                const std::vector<std::string>& regressions) {
  json out = {
      {"method", MethodJson(o, run, history, seen.drain_s)},
      {"churn_seconds", seen.churn_s},
      {"baseline", SampleJson(seen.base)},
      {"settled", SampleJson(seen.settled)},
      {"after_malloc_trim", std::move(trimmed)},
      {"end", SampleJson(seen.end)},
      {"max_series_of_deleted_pods", seen.max_gone},
      {"rss_growth_bytes", static_cast<int64_t>(seen.end.usage.rss_bytes) -
                               static_cast<int64_t>(seen.base.usage.rss_bytes)},
      {"regressions", regressions},
      {"pass", regressions.empty()},
      {"samples", json::array()}};
  for (const Sample& s : seen.samples) out["samples"].push_back(SampleJson(s));
  return out;
}

int Fail(const char* why) {
  std::fprintf(stderr, "pod_churn: %s\n", why);
  return 1;
}

int Run(const Options& o) {
  const std::string run_id = trainsim::NewRunId();
  const std::string node = "soak-" + run_id;
  testing::FakeApiServer api;
  std::string error;
  if (!api.Start(&error)) {
    std::fprintf(stderr, "pod_churn: fake API server: %s\n", error.c_str());
    return 1;
  }
  std::unique_ptr<PeerNetns> peer;
  if (o.traffic) peer = std::make_unique<PeerNetns>(run_id);
  ChurnPods pods(api, run_id, node, peer ? peer->peer_address() : "");
  const int port = trainsim::FreeLoopbackPort();
  const std::string log = "/tmp/trainscope-soak-churn-" + run_id + ".log";
  const int history = o.history > 0 ? o.history : AgentDefaultHistory(o.agent);
  trainsim::Subprocess agent =
      StartAgent(o, api, pods, node, port, history, log);
  std::fprintf(stderr, "pod_churn: run %s, agent pid %d on port %d, log %s\n",
               run_id.c_str(), agent.pid(), port, log.c_str());
  if (!WaitReady(port, agent)) return Fail("the agent did not become ready");
  ChurnRun run(o, pods, agent.pid(), port);
  WarmUp(port, o.interval_s);
  Observed seen;
  auto base = run.Take();
  if (!base || g_stop) return 1;
  seen.base = *base;
  std::fprintf(stderr, "pod_churn: baseline\n");
  run.Print(seen.base);

  const auto churn_start = Clock::now();
  if (!run.Churn(&seen.samples))
    return Fail("interrupted or the agent stopped");
  seen.churn_s =
      std::chrono::duration<double>(Clock::now() - churn_start).count();
  std::vector<std::string> regressions;
  if (!SettleAndJudge(run, o, history, seen, regressions))
    return Fail("the agent stopped answering");
  if (!agent.Running()) regressions.push_back("the agent exited");

  PrintTable(seen.base, seen.end, seen.max_gone);
  json trimmed = o.malloc_trim_probe ? MallocTrimProbe(agent.pid()) : nullptr;
  const json out = ResultJson(o, run, history, seen, trimmed, regressions);
  agent.Stop();
  pods.DeleteAll();
  if (!o.out.empty()) {
    std::ofstream f(o.out);
    f << out.dump(1) << "\n";
    std::fprintf(stderr, "pod_churn: wrote %s\n", o.out.c_str());
  }
  for (const std::string& r : regressions)
    std::fprintf(stderr, "pod_churn: FAIL: %s\n", r.c_str());
  if (regressions.empty()) {
    std::remove(log.c_str());
    std::fprintf(stderr, "pod_churn: PASS\n");
  }
  return regressions.empty() ? 0 : 1;
}

}  // namespace
}  // namespace trainscope::soak

int main(int argc, char** argv) {
  trainscope::soak::Options o;
  CLI::App app{"Pod churn soak: the agent while pods come and go"};
  app.add_option("--agent", o.agent, "trainscope-agent binary");
  app.add_option("--pods", o.pods, "pods created (and deleted) in all")
      ->check(CLI::PositiveNumber);
  app.add_option("--duration", o.duration_s, "seconds of churn")
      ->check(CLI::PositiveNumber);
  app.add_option("--alive", o.alive, "pods alive at once (about)")
      ->check(CLI::PositiveNumber);
  app.add_option("--interval", o.interval_s, "agent sampling interval");
  app.add_option("--sample", o.sample_s, "seconds between looks at the agent");
  app.add_option("--rss-tolerance-mib", o.rss_tolerance_mib,
                 "RSS growth allowed at the end (the allocator keeps freed "
                 "heap in pages that still hold a live chunk)");
  app.add_option("--heap-tolerance-mib", o.heap_tolerance_mib,
                 "growth of the agent's live heap allowed at the end "
                 "(trainscope_agent_heap_in_use_bytes): a leak grows it")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--history", o.history,
                 "agent --history (default: the agent's default); memory is "
                 "judged once interval x history passed after the churn");
  app.add_flag("--lru-may-keep", o.lru_may_keep,
               "do not fail when the LRU flow maps keep entries of deleted "
               "pods (agents that left them to the kernel's eviction)");
  app.add_flag("--malloc-trim-probe", o.malloc_trim_probe,
               "at the end, call malloc_trim(0) in the agent through gdb and "
               "record RSS (diagnosis of the RSS growth; needs gdb)");
  app.add_option("--traffic", o.traffic,
                 "pods send UDP to a namespace of the run (true/false)");
  app.add_option("--out", o.out, "JSON result file");
  CLI11_PARSE(app, argc, argv);
  if (geteuid() != 0) {
    std::fprintf(stderr, "pod_churn: needs root (cgroups, BPF maps)\n");
    return 1;
  }
  struct sigaction sa {};
  sa.sa_handler = [](int) { trainscope::soak::g_stop = true; };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  try {
    return trainscope::soak::Run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pod_churn: %s\n", e.what());
    return 1;
  }
}
