#include "cluster_verify.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "exec.h"

namespace trainsim {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

ClusterVerify::ClusterVerify(const Scenario& scenario,
                             std::vector<std::string> nodes)
    : scenario_(scenario) {
  order_.push_back(kClusterView);
  order_.push_back(kClusterTriageView);
  order_.insert(order_.end(), nodes.begin(), nodes.end());
  for (const std::string& v : order_)
    views_[v] = std::make_unique<VerifyTracker>(scenario);
}

void ClusterVerify::Observe(const std::string& view,
                            const nlohmann::json& report, double now_s) {
  auto it = views_.find(view);
  if (it != views_.end()) it->second->Observe(report, now_s);
}

namespace {

// When both cluster views and some node view had named `e`.
std::optional<double> BothSeen(
    const std::map<std::string, std::unique_ptr<VerifyTracker>>& views,
    const Expectation& e) {
  std::optional<double> cluster, triage, node;
  for (const auto& [name, t] : views) {
    auto at = t->FirstSeen(e);
    if (!at) continue;
    if (name == ClusterVerify::kClusterView)
      cluster = at;
    else if (name == ClusterVerify::kClusterTriageView)
      triage = at;
    else
      node = node ? std::min(*node, *at) : *at;
  }
  if (!cluster || !triage || !node) return std::nullopt;
  return std::max({*cluster, *triage, *node});
}

}  // namespace

size_t ClusterVerify::DetectedCount() const {
  size_t n = 0;
  for (const Expectation& e : scenario_.expect)
    n += BothSeen(views_, e).has_value();
  return n;
}

ojson ClusterVerify::ResultJson() const {
  ojson detected = ojson::array(), missing = ojson::array(),
        unexpected = ojson::array();
  const VerifyTracker& any = *views_.at(kClusterView);
  for (const Expectation& e : scenario_.expect) {
    ojson entry = EntryJson(e.kind, e.pod, e.node);
    if (auto at = BothSeen(views_, e)) {
      entry["after_s"] = any.AfterS(e, *at);
      detected.push_back(entry);
    } else {
      missing.push_back(entry);
    }
  }
  std::set<std::string> listed;
  ojson views = ojson::object();
  for (const std::string& name : order_) {
    const VerifyTracker& t = *views_.at(name);
    for (const auto& u : t.Unexpected())
      if (listed.insert(u.dump()).second) unexpected.push_back(u);
    views[name] = t.ViewJson();
  }
  return ojson{{"scenario", scenario_.name},
               {"passed", missing.empty() && unexpected.empty()},
               {"detected", detected},
               {"missing", missing},
               {"unexpected", unexpected},
               {"views", views}};
}

std::optional<nlohmann::json> ClusterReport(
    const std::string& cli, const std::string& prometheus, double range_s,
    double step_s, std::string* error,
    const std::vector<std::string>& extra_args) {
  std::vector<std::string> args = {cli,
                                   "report",
                                   "--prometheus",
                                   prometheus,
                                   "--json",
                                   "--range",
                                   fmt::format("{}", std::ceil(range_s)),
                                   "--step",
                                   fmt::format("{}", step_s)};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  CommandResult r = RunCommand(args, std::chrono::seconds(20));
  // The JSON is the last line that parses (warnings may precede it).
  const std::string& out = r.output;
  for (size_t start = 0; r.exit_code == 0 && start < out.size();
       start = out.find('\n', start) + 1) {
    if (out[start] != '{') {
      if (out.find('\n', start) == std::string::npos) break;
      continue;
    }
    auto j = nlohmann::json::parse(out.substr(start), nullptr, false);
    if (!j.is_discarded()) return j;
    break;
  }
  if (error)
    *error = "exit " + std::to_string(r.exit_code) + ": " +
             out.substr(0, std::min<size_t>(out.size(), 300));
  return std::nullopt;
}

std::string DefaultCliPath() {
  if (const char* env = std::getenv("TRAINSIM_TRAINSCOPE_CLI"); env && *env)
    return env;
  const fs::path self = fs::path(SelfExe()).parent_path();
  for (const fs::path& p :
       {self / "../../agent/cli/trainscope", self / "trainscope"})
    if (fs::exists(p)) return fs::canonical(p).string();
  return "";
}

}  // namespace trainsim
