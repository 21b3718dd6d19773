#include "cluster_verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "diagnosis/detectors.h"
#include "diagnosis/settings.h"
#include "exec.h"
#include "placement.h"

namespace trainsim {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace dx = trainscope::diagnosis;

namespace {

// What a node holds of one job.
struct Holding {
  int pods = 0;
  int ps = 0;
  int serving_ps = 0;  // PS holding at least one variable
  int workers = 0;     // workers and masters: the pods compared as ranks
  bool suspect = false;
};

// The smallest comparison sets of the agent's detectors (agent/diagnosis):
// allreduce_straggler and allreduce_slow_link skip a job with fewer than 2
// ranks in the window; input_io_bound compares a worker with the median of
// at least 2 other workers.
constexpr int kMinRanks = 2;
constexpr int kMinInputIoPeers = 2;

bool Holds(const std::string& kind, const Job& job, const Holding& h) {
  const auto min_workers =
      static_cast<int>(dx::StragglerSettings{}.min_workers);
  if (kind == dx::kStragglerWorker) {
    if (job.kind == JobKind::kPsSync)
      return h.suspect &&
             h.workers >= static_cast<int>(dx::SyncPsSettings{}.min_workers);
    if (h.workers >= min_workers) return h.suspect;
    return h.serving_ps > 0 && job.workers >= min_workers;
  }
  if (kind == dx::kAllreduceStraggler || kind == dx::kAllreduceSlowLink)
    return h.suspect && h.workers >= kMinRanks;
  if (kind == dx::kHotParameterServer)
    return h.workers > 0 || (job.ps > 0 && h.ps == job.ps);
  if (kind == dx::kInputIoBound)
    return h.suspect && h.workers >= 1 + kMinInputIoPeers;
  int total = 0;
  for (const auto& [role, n] : job.Replicas()) total += n;
  return h.pods == total;
}

// A job-level diagnosis (expect[].job) judges the whole job: a node view
// must name it only where that node holds every pod of the job.
std::vector<std::string> NodesHoldingJob(const Layout& layout,
                                         const Expectation& e) {
  std::vector<int> held(layout.nodes.size(), 0);
  int total = 0;
  for (const SimPod& p : layout.pods) {
    if (p.job->namespace_name + "/" + p.job->name != e.job) continue;
    ++total;
    if (p.node >= 0 && p.node < static_cast<int>(held.size())) ++held[p.node];
  }
  std::vector<std::string> out;
  for (size_t n = 0; n < held.size(); ++n)
    if (total > 0 && held[n] == total) out.push_back(layout.nodes[n].name);
  return out;
}

}  // namespace

std::vector<std::string> NodesThatMustName(const Layout& layout,
                                           const Expectation& e) {
  if (!e.job.empty()) return NodesHoldingJob(layout, e);
  if (e.pod.empty()) return {e.node};
  const SimPod* pod = layout.Find(e.pod);
  if (!pod || pod->node < 0 ||
      pod->node >= static_cast<int>(layout.nodes.size()))
    return {};
  if (!dx::JudgesWholeJob(e.kind)) return {layout.NodeOf(*pod).name};
  const Job& job = *pod->job;
  // PS that serve the workers: those holding a variable (a real program's
  // placement is unknown: every PS).
  std::vector<bool> serving(job.ps, true);
  if (!job.program && !job.variables.empty()) {
    const std::vector<uint64_t> bytes = BytesPerPs(job, PlaceVariables(job));
    for (int k = 0; k < job.ps && k < static_cast<int>(bytes.size()); ++k)
      serving[k] = bytes[k] > 0;
  }
  std::vector<Holding> held(layout.nodes.size());
  for (const SimPod& p : layout.pods) {
    if (p.job != &job || p.node < 0 || p.node >= static_cast<int>(held.size()))
      continue;
    Holding& h = held[p.node];
    ++h.pods;
    if (p.role == PodRole::kPs) {
      ++h.ps;
      if (p.index < job.ps && serving[p.index]) ++h.serving_ps;
    }
    if (p.role == PodRole::kWorker || p.role == PodRole::kMaster) ++h.workers;
    if (&p == pod) h.suspect = true;
  }
  std::vector<std::string> out;
  for (size_t n = 0; n < held.size(); ++n)
    if (Holds(e.kind, job, held[n])) out.push_back(layout.nodes[n].name);
  return out;
}

ClusterVerify::ClusterVerify(const Scenario& scenario,
                             std::vector<std::string> nodes)
    : scenario_(scenario) {
  order_.push_back(kClusterView);
  order_.push_back(kClusterTriageView);
  order_.insert(order_.end(), nodes.begin(), nodes.end());
  for (const std::string& v : order_)
    views_[v] = std::make_unique<VerifyTracker>(scenario);
  // Placement does not depend on the run id: any valid one will do.
  const Layout layout = MakeLayout(scenario, "00000000");
  for (const Expectation& e : scenario.expect) {
    std::vector<std::string> required = {kClusterView, kClusterTriageView};
    for (const std::string& n : NodesThatMustName(layout, e))
      // A node this verify has no view of cannot be asked (nor pass it).
      if (views_.count(n)) required.push_back(n);
    required_.push_back(std::move(required));
  }
}

void ClusterVerify::Observe(const std::string& view,
                            const nlohmann::json& report, double now_s) {
  auto it = views_.find(view);
  if (it != views_.end()) it->second->Observe(report, now_s);
}

const std::vector<std::string>& ClusterVerify::RequiredViews(
    size_t expect_index) const {
  return required_.at(expect_index);
}

std::optional<double> ClusterVerify::SeenByAll(size_t i) const {
  const Expectation& e = scenario_.expect[i];
  std::optional<double> last;
  for (const std::string& view : required_[i]) {
    auto at = views_.at(view)->FirstSeen(e);
    if (!at) return std::nullopt;
    last = last ? std::max(*last, *at) : *at;
  }
  return last;
}

size_t ClusterVerify::DetectedCount() const {
  size_t n = 0;
  for (size_t i = 0; i < scenario_.expect.size(); ++i)
    n += SeenByAll(i).has_value();
  return n;
}

ojson ClusterVerify::ResultJson() const {
  ojson detected = ojson::array(), missing = ojson::array(),
        unexpected = ojson::array();
  const VerifyTracker& any = *views_.at(kClusterView);
  for (size_t i = 0; i < scenario_.expect.size(); ++i) {
    const Expectation& e = scenario_.expect[i];
    ojson entry = EntryJson(e.kind, e.pod, e.node, e.job);
    if (auto at = SeenByAll(i)) {
      entry["after_s"] = any.AfterS(e, *at);
      entry["required_views"] = required_[i];
      detected.push_back(entry);
    } else {
      entry["required_views"] = required_[i];
      ojson from = ojson::array();
      for (const std::string& view : required_[i])
        if (!views_.at(view)->FirstSeen(e)) from.push_back(view);
      entry["missing_from"] = from;
      missing.push_back(entry);
    }
  }
  std::set<std::string> listed;
  ojson views = ojson::object();
  for (const std::string& name : order_) {
    const VerifyTracker& t = *views_.at(name);
    for (const auto& u : t.Unexpected())
      if (listed.insert(u.dump()).second) unexpected.push_back(u);
    std::vector<bool> required;
    for (const auto& r : required_)
      required.push_back(std::find(r.begin(), r.end(), name) != r.end());
    views[name] = t.ViewJson(&required);
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
