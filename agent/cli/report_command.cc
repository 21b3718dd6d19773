// trainscope report --agent URL | --prometheus URL [--namespace NS]
//                   [--job NAME] [--range S] [--step S] [--end T]
//                   [--selector M]... [--cluster-label L]
//                   [--bearer-token-file F] [--ca-file F]
//                   [--header 'N: V']... [--timeout S]
//                   [--max-response-bytes N] [--json | --html FILE]
// The node view is the agent's own report; the cluster view rebuilds the
// windows from Prometheus and runs the same detectors over every node.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "cli/cli_flags.h"
#include "cli/commands.h"
#include "cli/kube_proxy.h"
#include "cli/report_cluster.h"
#include "cli/report_clusters.h"
#include "cli/report_http.h"
#include "cli/report_lost_time.h"
#include "cli/report_prometheus.h"
#include "cli/report_selector.h"
#include "cli/server_text.h"
#include "diagnosis/analysis.h"
#include "report/report_json.h"
#include "report_page/page.h"
#include "trainscope/time_format.h"

namespace trainscope {
namespace {

struct ReportFlags {
  std::string agent;
  cli::KubeProxyFlags kube;  // --kubeconfig: the agent of --node
  std::string node;
  std::string prometheus;
  std::string namespace_name;
  std::string job;
  bool json = false;
  std::string html;       // write the report page here
  std::string from_json;  // read a saved report instead (tests, offline)
  double range_seconds = 600;
  double step_seconds = 15;
  double end_unix_seconds = 0;  // 0 = now
  size_t batch_series = 50000;  // 0 = the whole cluster in one window
  cli::TriageMode triage = cli::TriageMode::kAuto;
  cli::HttpClientFlags client;  // --bearer-token-file, --ca-file, --header
  cli::HttpLimits limits;       // --timeout, --max-response-bytes
  std::vector<std::string> selectors;     // --selector
  std::string cluster_label = "cluster";  // "" = one cluster, no split
};

// Finite bounds for the numeric flags: ten years of history, a day's step,
// the year 2100, a hundred million series.
constexpr double kMaxRangeSeconds = 10 * 365 * 86400.0;
constexpr double kMaxStepSeconds = 86400;
constexpr double kMaxEndUnixSeconds = 4102444800;
constexpr uint64_t kMaxBatchSeries = 100'000'000;

int Fail(const std::string& message, int code = 1) {
  std::cerr << "trainscope report: " << message << "\n";
  return code;
}

// Keeps the diagnoses and jobs of one namespace and/or job ("" = all).
void Filter(nlohmann::json& report, const std::string& ns,
            const std::string& job) {
  auto keep = [&](const nlohmann::json& item) {
    // find() and == never throw on a saved report of another shape.
    auto is = [&item](const char* key, const std::string& want) {
      const auto it = item.find(key);
      return it != item.end() && *it == want;
    };
    return (ns.empty() || is("namespace", ns)) &&
           (job.empty() || is("training_job", job));
  };
  for (const char* list : {"diagnoses", "jobs"}) {
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& item : report[list]) {
      if (keep(item)) kept.push_back(item);
    }
    report[list] = std::move(kept);
  }
}

// Writes the page next to the target and renames it into place, so a
// browser reloading FILE never sees half a page.
int WriteHtml(const nlohmann::json& report, const std::string& path) {
  const std::string page = page::RenderReportPage(report, page::PageOptions{});
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << page;
    out.flush();
    if (!out) return Fail("cannot write " + tmp + ": " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return Fail("cannot write " + path + ": " + std::strerror(err));
  }
  std::cerr << "trainscope report: wrote " << path << " (" << page.size()
            << " bytes)\n";
  return 0;
}

int Print(const nlohmann::json& report, const ReportFlags& flags) {
  if (!flags.html.empty()) return WriteHtml(report, flags.html);
  const bool json = flags.json;
  if (json) {
    std::cout << report.dump(2) << "\n";
  } else {
    // Names, summaries and evidence came from an agent or from
    // Prometheus's labels: no escape sequence of theirs reaches a terminal.
    std::cout << ReportText(cli::ServerTextJson(report));
  }
  return 0;
}

// The node's agent through the API server's pod proxy (--kubeconfig).
int KubeAgentTarget(const ReportFlags& flags, cli::HttpTarget* target,
                    std::string* name) {
  if (flags.node.empty()) {
    return Fail("--kubeconfig needs --node NODE: the node whose agent reports",
                2);
  }
  cli::AgentPod agent;
  bool usage_error = false;
  if (Status s = cli::AgentThroughApiServer(flags.kube, flags.limits,
                                            {.node = flags.node}, target,
                                            &agent, &usage_error);
      !s.ok()) {
    return Fail(s.message(), usage_error ? 2 : 1);
  }
  *name = "the agent " + flags.kube.agent_namespace + "/" + agent.name +
          " (node " + flags.node + ")";
  return 0;
}

int AgentReport(const ReportFlags& flags) {
  cli::HttpTarget target;
  std::string agent_name = flags.agent;
  if (!flags.kube.kubeconfig.empty()) {
    if (int rc = KubeAgentTarget(flags, &target, &agent_name); rc != 0)
      return rc;
  } else {
    if (Status s = cli::AgentUrlTarget(flags.agent, flags.client, flags.limits,
                                       &target);
        !s.ok()) {
      return Fail(s.message(), 2);
    }
  }
  nlohmann::json report;
  if (Status s = cli::GetJson(target, "/api/v1/report", {}, &report); !s.ok()) {
    return Fail(flags.kube.kubeconfig.empty()
                    ? s.message()
                    : cli::ExplainProxyError(s.message()));
  }
  if (!report.is_object() || !report.contains("diagnoses") ||
      !report["diagnoses"].is_array() || !report.contains("jobs") ||
      !report["jobs"].is_array()) {
    return Fail(agent_name +
                ": /api/v1/report is not a Trainscope report (no diagnoses "
                "and jobs lists)");
  }
  Filter(report, flags.namespace_name, flags.job);
  return Print(report, flags);
}

// A report saved earlier (`--json` output or /api/v1/report), re-rendered.
int SavedReport(const ReportFlags& flags) {
  std::ifstream in(flags.from_json, std::ios::binary);
  if (!in) {
    return Fail("--from-json: cannot read " + flags.from_json + ": " +
                    std::strerror(errno),
                2);
  }
  nlohmann::json report = nlohmann::json::parse(in, nullptr, false);
  if (report.is_discarded() || !report.is_object() ||
      !report.value("diagnoses", nlohmann::json()).is_array() ||
      !report.value("jobs", nlohmann::json()).is_array()) {
    return Fail(flags.from_json +
                " is not a Trainscope report (JSON with diagnoses and jobs "
                "lists)");
  }
  Filter(report, flags.namespace_name, flags.job);
  return Print(report, flags);
}

nlohmann::json MissingNodesJson(const std::vector<cli::MissingNode>& missing,
                                double end) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : missing) {
    std::cerr << "trainscope report: node " << cli::ServerText(m.node)
              << " has sent no series for "
              << static_cast<int>(end - m.last_seen)
              << " s (agent down or not scraped): its pods are judged on "
                 "partial data\n";
    out.push_back(
        {{"node", m.node},
         {"last_seen",
          Rfc3339(std::chrono::system_clock::time_point(
              std::chrono::duration_cast<std::chrono::system_clock::duration>(
                  std::chrono::duration<double>(m.last_seen))))},
         {"seconds_since", std::round(end - m.last_seen)}});
  }
  return out;
}

nlohmann::json TriageJson(const cli::TriageSummary& t) {
  if (!t.used) return {{"used", false}};
  return {{"used", true},
          {"recording_rules", t.recording_rules},
          {"jobs", t.jobs},
          {"jobs_replayed", t.jobs_replayed},
          {"training_pods", t.training_pods},
          {"pods_replayed", t.pods_replayed},
          {"pods_without_jobs_replayed", t.pods_without_jobs_replayed},
          {"flagged_by", t.flagged_by}};
}

// The range's lost time per cause and job (report_lost_time.h); a
// Prometheus that cannot say leaves the section out, not the report.
void SetLostTime(nlohmann::json& report, const cli::HttpTarget& target,
                 const cli::ClusterViewQuery& q) {
  cli::LostTime lost;
  const Status s = cli::QueryLostTime(
      target,
      cli::FilterMatchers(q.namespace_name, q.training_job, q.extra_matchers),
      q.range_seconds, q.end, &lost);
  if (!s.ok()) {
    std::cerr << "trainscope report: no lost time: " << s.message() << "\n";
    return;
  }
  report["lost_time"] = cli::LostTimeJson(lost);
}

// The cluster view of the series `matchers` select: 0, or the exit code
// after the error is printed.
int BuildPrometheusReport(const ReportFlags& flags,
                          const cli::HttpTarget& target,
                          const std::string& matchers,
                          std::chrono::system_clock::time_point now,
                          nlohmann::json* out) {
  const double end =
      std::chrono::duration<double>(now.time_since_epoch()).count();
  cli::ClusterViewQuery query{
      flags.prometheus,    flags.namespace_name, flags.job, matchers,
      flags.range_seconds, flags.step_seconds,   end,       flags.batch_series,
      flags.triage};
  cli::ClusterEvaluation eval;
  if (Status s = cli::EvaluateCluster(target, query, &eval); !s.ok()) {
    return Fail(s.message());
  }
  if (eval.pods_seen == 0) {
    std::cerr << "trainscope report: no trainscope series in "
              << flags.prometheus << " for the last " << flags.range_seconds
              << " s (is Prometheus scraping the agents?)\n";
  }
  nlohmann::json diagnoses = nlohmann::json::array();
  for (const auto& d : eval.diagnoses) {
    diagnoses.push_back(diagnosis::DiagnosisJson(d));
  }
  nlohmann::json report = ReportView("cluster", eval.pods, diagnoses, now);
  SetPsTrafficShares(report, PsSharesOf(eval.jobs));
  SetJobSpeeds(report, eval.speeds);
  SetJobHeadroom(report, eval.headroom);
  report["missing_nodes"] = MissingNodesJson(eval.missing, end);
  SetLostTime(report, target, query);
  report["source"] = {{"prometheus", flags.prometheus},
                      {"range_seconds", flags.range_seconds},
                      {"step_seconds", flags.step_seconds},
                      {"evaluations", eval.evaluations},
                      {"batches", eval.batches},
                      {"triage", TriageJson(eval.triage)}};
  *out = std::move(report);
  return 0;
}

int PrometheusReport(const ReportFlags& flags) {
  cli::HttpTarget target;
  if (Status s = cli::ParseHttpUrl(flags.prometheus, &target); !s.ok()) {
    return Fail("--prometheus: " + s.message(), 2);
  }
  if (Status s = cli::ApplyHttpClientFlags(flags.client, &target); !s.ok()) {
    return Fail(s.message(), 2);
  }
  target.limits = flags.limits;
  std::string extra_matchers;
  if (Status s = cli::ParseSelectors(flags.selectors, &extra_matchers);
      !s.ok()) {
    return Fail("--selector " + s.message(), 2);
  }
  auto now = std::chrono::system_clock::now();
  if (flags.end_unix_seconds > 0) {
    now = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(flags.end_unix_seconds)));
  }
  const double end =
      std::chrono::duration<double>(now.time_since_epoch()).count();
  std::vector<std::string> clusters;
  if (!flags.cluster_label.empty()) {
    if (Status s = cli::ListClusters(target, flags.prometheus,
                                     flags.cluster_label, extra_matchers,
                                     flags.range_seconds, end, &clusters);
        !s.ok()) {
      return Fail(s.message());
    }
  }
  // One Prometheus of one cluster: its series carry no cluster label.
  if (clusters.empty() || (clusters.size() == 1 && clusters[0].empty())) {
    nlohmann::json report;
    if (int rc = BuildPrometheusReport(flags, target, extra_matchers, now,
                                       &report)) {
      return rc;
    }
    return Print(report, flags);
  }
  std::vector<cli::ClusterReport> reports;
  for (const std::string& cluster : clusters) {
    cli::ClusterReport one{cluster, {}};
    const std::string matchers =
        cli::ClusterMatchers(extra_matchers, flags.cluster_label, cluster);
    if (int rc =
            BuildPrometheusReport(flags, target, matchers, now, &one.report)) {
      return rc;
    }
    reports.push_back(std::move(one));
  }
  return Print(
      cli::MergeClusterReports(flags.cluster_label, std::move(reports)), flags);
}

}  // namespace

int RunReportCommand(int argc, char** argv) {
  ReportFlags flags;
  CLI::App app{
      "Print the bottleneck report: one agent's (--agent, or --kubeconfig "
      "with --node through the API server) or the whole "
      "cluster's, computed from the agents' series in Prometheus "
      "(--prometheus)."};
  auto* agent = app.add_option("--agent", flags.agent,
                               "Agent base URL, e.g. http://node-a:9476");
  auto* prom =
      app.add_option("--prometheus", flags.prometheus,
                     "Prometheus base URL, e.g. http://prometheus:9090");
  agent->excludes(prom);
  auto* kubeconfig = cli::AddKubeProxyFlags(app, &flags.kube);
  kubeconfig->excludes(agent);
  kubeconfig->excludes(prom);
  app.add_option("--node", flags.node,
                 "With --kubeconfig: report from this node's agent")
      ->needs(kubeconfig);
  // Hidden: re-renders a saved report (tests, offline pages).
  auto* saved = app.add_option("--from-json", flags.from_json,
                               "Read a saved report JSON file")
                    ->group("");
  saved->excludes(agent);
  saved->excludes(prom);
  saved->excludes(kubeconfig);
  // The kubeconfig holds the API server's CA and credentials.
  app.add_option("--bearer-token-file", flags.client.bearer_token_file,
                 "Send 'Authorization: Bearer <the file's token>' (an "
                 "authenticating proxy, an agent's --web-config-file)")
      ->excludes(kubeconfig);
  app.add_option("--ca-file", flags.client.ca_file,
                 "CA bundle (PEM) that signs the https server's certificate "
                 "(default: the system's CAs)")
      ->excludes(kubeconfig);
  app.add_option("--header", flags.client.headers,
                 "Extra request header 'Name: value', repeatable (e.g. "
                 "'X-Scope-OrgID: team-a' for Mimir/Cortex/Thanos tenants)");
  app.add_option("--selector", flags.selectors,
                 "Label matchers added to every cluster-view query, "
                 "repeatable (e.g. 'cluster=\"a\"' when one Prometheus holds "
                 "several clusters)")
      ->needs(prom);
  app.add_option(
         "--cluster-label", flags.cluster_label,
         "Label that tells clusters apart behind Thanos Query, Mimir or "
         "Cortex (the mixin's clusterLabel): each cluster is judged alone and "
         "every diagnosis and job names its cluster; '' = judge all series "
         "as one cluster")
      ->capture_default_str()
      ->check([](const std::string& v) {
        return v.empty() || cli::IsLabelName(v)
                   ? std::string()
                   : "--cluster-label: \"" + v +
                         "\" is not a Prometheus label name";
      })
      ->needs(prom);
  app.add_option("--namespace", flags.namespace_name, "Only this namespace");
  app.add_option("--job", flags.job, "Only this training job");
  app.add_option("--range", flags.range_seconds,
                 "Seconds of history to evaluate (with --prometheus)")
      ->check(NumberIn(0, kMaxRangeSeconds))
      ->capture_default_str();
  app.add_option("--step", flags.step_seconds,
                 "Evaluation step in seconds, at least the scrape interval "
                 "(with --prometheus)")
      ->check(NumberIn(0, kMaxStepSeconds))
      ->capture_default_str();
  app.add_option("--end", flags.end_unix_seconds,
                 "End of the evaluated range in Unix seconds, to look at the "
                 "past (with --prometheus; default now)")
      ->check(NumberIn(0, kMaxEndUnixSeconds));
  app.add_option("--batch-series", flags.batch_series,
                 "Read a large cluster in batches of whole training jobs of "
                 "about this many series each, to bound memory (with "
                 "--prometheus; 0 = all at once)")
      ->check(WholeNumberIn(0, kMaxBatchSeries))
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--triage",
         [&flags](const std::string& value) {
           cli::ParseTriageMode(value, &flags.triage);
         },
         "On a large cluster, replay only the jobs, pods and nodes where a "
         "detector's necessary condition holds, found by a few aggregate "
         "queries on Trainscope's recording rules (with --prometheus): auto "
         "= when the cluster needs more than one batch, on, off (replay "
         "everything)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->default_str("auto");
  cli::AddHttpLimitFlags(app, &flags.limits,
                         NumberText(flags.limits.timeout_seconds));
  auto* json = app.add_flag("--json", flags.json, "Print the report JSON");
  app.add_option("--html", flags.html,
                 "Write the report as a self-contained HTML page (inline SVG, "
                 "no scripts) to this file")
      ->excludes(json);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message; any flag error is a usage error (2).
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (flags.agent.empty() && flags.prometheus.empty() &&
      flags.from_json.empty() && flags.kube.kubeconfig.empty()) {
    return Fail(
        "give --agent URL, --kubeconfig FILE --node NODE or --prometheus URL "
        "(see --help)",
        2);
  }
  // The detectors log entering diagnoses; the report itself says it.
  spdlog::set_level(spdlog::level::err);
  try {
    if (!flags.from_json.empty()) return SavedReport(flags);
    return flags.agent.empty() && flags.kube.kubeconfig.empty()
               ? PrometheusReport(flags)
               : AgentReport(flags);
  } catch (const std::exception& e) {
    return Fail(std::string("unexpected error: ") + e.what());
  }
}

}  // namespace trainscope
