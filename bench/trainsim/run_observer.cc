#include "run_observer.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <optional>

#include "stats.h"

namespace trainsim {
namespace {

// The cluster view costs a Prometheus query per family: every few polls.
constexpr int kClusterEvery = 3;

// GET /api/v1/report; a body that is not JSON counts as no report.
std::optional<nlohmann::json> FetchReport(int port) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(1);
  cli.set_read_timeout(3);
  auto res = cli.Get("/api/v1/report");
  if (!res || res->status != 200) return std::nullopt;
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// A diagnosis' string field, "" when absent or not a string.
std::string Text(const nlohmann::json& d, const char* key) {
  auto it = d.find(key);
  return it != d.end() && it->is_string() ? it->get<std::string>() : "";
}

// The warning and critical diagnoses of a report (a finding, not info).
std::vector<const nlohmann::json*> Findings(const nlohmann::json& report) {
  std::vector<const nlohmann::json*> out;
  if (!report.contains("diagnoses") || !report["diagnoses"].is_array())
    return out;
  for (const auto& d : report["diagnoses"]) {
    if (!d.is_object()) continue;
    const std::string severity = Text(d, "severity");
    if (severity == "warning" || severity == "critical") out.push_back(&d);
  }
  return out;
}

// "kind/pod"; a node-level diagnosis has no pod: "kind/@node".
std::string Label(const nlohmann::json& d) {
  const std::string pod = Text(d, "pod");
  return Text(d, "kind") + "/" +
         (pod.empty() && d.contains("node") ? "@" + Text(d, "node") : pod);
}

// "; active: kind/pod, ..." for the warning and critical diagnoses.
std::string ActiveDiagnoses(const nlohmann::json& report) {
  std::string out;
  for (const nlohmann::json* d : Findings(report))
    out += (out.empty() ? "; active: " : ", ") + Label(*d);
  return out;
}

// The agent's report as a person reads it: diagnoses, then each job's PS
// traffic shares.
void PrintReport(const nlohmann::json& report) {
  std::printf("\nBottleneck report from the agent:\n");
  const auto& ds = report.value("diagnoses", nlohmann::json::array());
  if (ds.empty()) std::printf("  no diagnoses\n");
  for (const auto& d : ds) {
    if (!d.is_object()) continue;
    std::printf("  %-9s %-31s %-22s %s\n", d.value("severity", "").c_str(),
                d.value("kind", "").c_str(), d.value("pod", "").c_str(),
                d.value("summary", "").c_str());
    if (d.contains("recommendations") && d["recommendations"].is_array())
      for (const auto& r : d["recommendations"])
        if (r.is_string())
          std::printf("  %-9s -> %s\n", "", r.get<std::string>().c_str());
  }
  for (const auto& job : report.value("jobs", nlohmann::json::array())) {
    if (!job.is_object() || !job.contains("ps_traffic_share") ||
        !job["ps_traffic_share"].is_object() || job["ps_traffic_share"].empty())
      continue;
    std::printf(
        "  job %s/%s PS traffic share:", job.value("namespace", "").c_str(),
        job.value("training_job", "").c_str());
    for (const auto& [pod, share] : job["ps_traffic_share"].items())
      if (share.is_number())
        std::printf(" %s=%.2f", pod.c_str(), share.get<double>());
    std::printf("\n");
  }
  std::fflush(stdout);
}

std::vector<std::string> NodeNames(const SimNode& node) {
  std::vector<std::string> names;
  for (const SimNodeInfo& n : node.layout().nodes) names.push_back(n.name);
  return names;
}

}  // namespace

RunObserver::RunObserver(const Scenario& scenario, const SimNode& node,
                         std::vector<AgentProcess>& agents,
                         PrometheusRunner* prometheus, std::string cli)
    : scenario_(scenario),
      node_(node),
      agents_(agents),
      prometheus_(prometheus),
      cli_(std::move(cli)),
      cluster_(!scenario.nodes.empty()),
      tracker_(scenario),
      views_(scenario, NodeNames(node)),
      rates_(scenario) {}

void RunObserver::Poll(double elapsed, bool final_poll) {
  for (const auto& [pod, c] : ReadStepCounts(node_.run_dir() + "/stats"))
    rates_.ObserveTruth(pod, elapsed, c.steps,
                        c.last_step_epoch_s > 0
                            ? std::optional<double>(c.last_step_epoch_s)
                            : std::nullopt);
  std::string status;
  size_t got = 0;
  PollAgents(elapsed, final_poll, &status, &got);
  if (cluster_ && prometheus_ && (final_poll || polls_ % kClusterEvery == 0))
    PollClusterView(elapsed, final_poll, &status);
  ++polls_;
  if (final_poll) return;
  std::printf("[%5.1fs] %s; expected diagnoses seen: %zu/%zu%s\n", elapsed,
              got ? "report received" : "no report yet",
              cluster_ ? views_.DetectedCount() : tracker_.DetectedCount(),
              scenario_.expect.size(), status.c_str());
  std::printf("%s", announcements_.c_str());
  announcements_.clear();
  std::fflush(stdout);
}

void RunObserver::AnnounceNew(const std::string& view,
                              const nlohmann::json& report) {
  for (const nlohmann::json* d : Findings(report)) {
    // A job-level diagnosis names neither pod nor node: add its job.
    const std::string label =
        Label(*d) +
        (Text(*d, "pod").empty() ? " " + Text(*d, "training_job") : "");
    if (!announced_.insert(view + " " + label).second) continue;
    announcements_ += "        new in " + view + ": " + Text(*d, "severity") +
                      " " + label + ": " + Text(*d, "summary") + "\n";
  }
}

void RunObserver::PollAgents(double elapsed, bool final_poll,
                             std::string* status, size_t* got) {
  for (AgentProcess& a : agents_) {
    if (a.died) continue;
    auto report = FetchReport(a.port);
    if (!report) continue;
    ++*got;
    rates_.ObserveAgent(*report, elapsed);
    diagnoses_.Observe(*report, elapsed);
    if (cluster_)
      views_.Observe(a.node, *report, elapsed);
    else
      tracker_.Observe(*report, elapsed);
    AnnounceNew(cluster_ ? a.node : "agent", *report);
    // One line per poll: in a cluster, each node's active diagnoses.
    const std::string active = ActiveDiagnoses(*report);
    *status += cluster_ && !active.empty() ? " | " + a.node + active : active;
    if (final_poll && !cluster_) PrintReport(*report);
  }
}

void RunObserver::PollClusterView(double elapsed, bool final_poll,
                                  std::string* status) {
  std::string error;
  auto report = ClusterReport(cli_, prometheus_->url(), elapsed + 30,
                              scenario_.interval_s, &error);
  if (report) {
    views_.Observe(ClusterVerify::kClusterView, *report, elapsed);
    diagnoses_.Observe(*report, elapsed);
    AnnounceNew("cluster", *report);
    *status += " | cluster" + ActiveDiagnoses(*report);
    if (final_poll) PrintReport(*report);
  } else {
    spdlog::warn("[trainsim] cluster report failed: {}", error);
  }
  auto triaged =
      ClusterReport(cli_, prometheus_->url(), elapsed + 30,
                    scenario_.interval_s, &error, {"--triage", "on"});
  if (triaged) {
    views_.Observe(ClusterVerify::kClusterTriageView, *triaged, elapsed);
  } else {
    spdlog::warn("[trainsim] triaged cluster report failed: {}", error);
  }
}

nlohmann::ordered_json RunObserver::Verdict(bool failed) const {
  nlohmann::ordered_json result =
      cluster_ ? views_.ResultJson() : tracker_.ResultJson();
  result["step_rates"] = rates_.ResultJson();
  if (!result["step_rates"]["passed"].get<bool>()) result["passed"] = false;
  if (failed) result["passed"] = false;
  return result;
}

nlohmann::ordered_json RunObserver::Results(
    const nlohmann::ordered_json& verdict) const {
  return RunResultsJson(scenario_, rates_, diagnoses_, verdict);
}

}  // namespace trainsim
