#include "agent.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "collector_registry.h"
#include "diagnosis/diagnosis.h"
#include "discovery/pod_source_factory.h"
#include "exporter/diagnosis_families.h"
#include "exporter/discovery_families.h"
#include "exporter/goodput_families.h"
#include "exporter/headroom_families.h"
#include "exporter/http_families.h"
#include "exporter/ps_share_families.h"
#include "profile_endpoint.h"
#include "report/report_json.h"
#include "report_page/page.h"

namespace trainscope {
namespace {

constexpr size_t kDiagnosisHistorySamples = 60;

}  // namespace

Agent::Agent(AgentConfig config)
    : config_(std::move(config)),
      history_(static_cast<size_t>(config_.history_size)) {}

Agent::~Agent() { Stop(); }

std::string Agent::DiscoveryModeName() const {
  return std::string(NameOfEnum(kDiscoveryModeNames, config_.discovery.mode));
}

Status Agent::Start() {
  MakeProfilers();
  // Bind before starting anything else: a taken port is the most common
  // start-up error and must not leave threads behind.
  if (Status bound = BindHttp(); !bound.ok()) return bound;
  if (Status started = StartDiscovery(); !started.ok()) {
    http_.reset();
    return started;
  }
  MakeSampler();
  MakeExporter();
  sampler_->Start();
  http_->Start();
  spdlog::info(
      "[agent] node {} listening on {}://{}:{}, sampling every {}s, "
      "discovery {}",
      config_.node_name, config_.web.tls_enabled ? "https" : "http",
      config_.listen_host, http_->port(), config_.interval_seconds,
      DiscoveryModeName());
  LogWebSecurity();
  return Status::Ok();
}

void Agent::MakeProfilers() {
  if (!config_.on_demand_profiler) return;
  profiler_ =
      std::make_shared<profiler::ProfilerService>(*config_.on_demand_profiler);
  if (config_.continuous_profiler) {
    continuous_ = std::make_shared<profiler::ContinuousProfiler>(
        *config_.continuous_profiler);
  }
}

Status Agent::BindHttp() {
  http_ = std::make_unique<HttpServer>(
      HttpHandlers{
          .metrics = [this] { return exporter_->Render(); },
          .ready = [this](std::string* why) { return Ready(why); },
          .pods_json =
              [this] {
                auto latest = history_.Latest();
                return PodsView(*pods_.Get(), latest.get()).dump();
              },
          .report =
              [this](const std::string& format) { return Report(format); },
          .page = [this] { return Page(); },
          .profile =
              [this](const HttpRequest& req, HttpReply reply) {
                ServeProfile(profiler_, *pods_.Get(), config_.node_name, req,
                             std::move(reply));
              },
          .profile_top =
              [this](const HttpRequest& req) {
                return ServeProfileTop(continuous_, *pods_.Get(),
                                       config_.node_name, req);
              },
      },
      config_.http, config_.web);
  Status bound = http_->Bind(config_.listen_host, config_.listen_port);
  if (!bound.ok()) http_.reset();
  return bound;
}

Status Agent::StartDiscovery() {
  const DiscoveryConfig& discovery = config_.discovery;
  Status made = Status::Ok();
  discovery_ = MakePodSource(discovery, config_.host, pods_, &made);
  if (!discovery_) return Status::Error("discovery: " + made.message());
  if (Status started = discovery_->Start(); !started.ok()) {
    discovery_.reset();
    return Status::Error(std::string("discovery ") + DiscoveryModeName() +
                         ": " + started.message());
  }
  peer_discovery_ = MakePeerPodSource(discovery, peer_pods_, &made);
  Status peer_started = made;
  if (peer_started.ok() && peer_discovery_) {
    peer_started = peer_discovery_->Start();
  }
  if (!peer_started.ok()) {
    peer_discovery_.reset();
    discovery_.reset();  // stops its thread
    return Status::Error("peer pods: " + peer_started.message());
  }
  return Status::Ok();
}

void Agent::MakeSampler() {
  sampler_ = std::make_unique<Sampler>(
      MakeCollectors(config_, {profiler_, continuous_}), config_.host, pods_,
      history_,
      std::chrono::milliseconds(
          static_cast<int64_t>(config_.interval_seconds * 1000)));
  if (peer_discovery_) sampler_->SetPeerPods(&peer_pods_);
  // The diagnosis engine runs once per sample over the recent history
  // (baseline for input_io_bound: up to 5 minutes at the default interval).
  diagnosis_ = std::make_unique<diagnosis::DiagnosisRunner>(config_.node_name);
  sampler_->SetAfterCycle([this] {
    diagnosis_->Update(history_.Window(
        std::min<size_t>(history_.capacity(), kDiagnosisHistorySamples)));
  });
}

// The collectors' sections in registry order, then the agent's own.
std::vector<FamilySection> Agent::ExportSections() {
  std::vector<FamilySection> sections = CollectorSections();
  sections.push_back(PsShareSection(*diagnosis_));
  sections.push_back(HeadroomSection(*diagnosis_));
  sections.push_back(GoodputSection(*diagnosis_));
  sections.push_back(
      [this](const ExportContext&, std::vector<prometheus::MetricFamily>& out) {
        std::optional<DiscoveryStats> stats;
        if (peer_discovery_) stats = peer_discovery_->stats();
        AppendPeerDiscoveryFamilies(DiscoveryModeName(), stats,
                                    peer_pods_.Get()->size(), out);
      });
  sections.push_back([this](const ExportContext& ctx,
                            std::vector<prometheus::MetricFamily>& out) {
    AppendDiagnosisFamilies(ctx, diagnosis_->Active(), out);
  });
  sections.push_back(
      [this](const ExportContext&, std::vector<prometheus::MetricFamily>& out) {
        AppendHttpFamilies(http_->stats(), http_->limits(), out);
      });
  return sections;
}

void Agent::MakeExporter() {
  exporter_ = std::make_unique<Exporter>(
      history_, config_.node_name, ExportSections(),
      SelfStats{
          .discovery_mode = DiscoveryModeName(),
          .discovery = [this] { return discovery_->stats(); },
          .sampler_cpu_seconds =
              [this] { return sampler_->cycle_cpu_seconds_total(); },
          .sampler_cycles = [this] { return sampler_->cycles_total(); },
      },
      config_.pod_filter);
}

// What --web-config-file turned on, and the one risky combination.
void Agent::LogWebSecurity() const {
  const WebConfig& web = config_.web;
  if (config_.web_config_file.empty()) return;
  spdlog::info(
      "[agent] web config {}: TLS {}{}, {} basic-auth user(s), {} bearer "
      "token(s)",
      config_.web_config_file, web.tls_enabled ? "on" : "off",
      web.tls.client_auth == ClientAuth::kRequireVerify ? " (client "
                                                          "certificates "
                                                          "required)"
                                                        : "",
      web.basic_auth_users.size(), web.bearer_tokens.size());
  if (!web.auth_enabled() && !web.tls_enabled) {
    spdlog::warn(
        "[agent] web config {} turns on neither TLS nor authentication: "
        "every endpoint is open, as without --web-config-file",
        config_.web_config_file);
  }
  if (web.auth_enabled() && !web.tls_enabled) {
    spdlog::warn(
        "[agent] credentials are checked over plain HTTP: they cross the "
        "network in clear text (add tls_server_config)");
  }
}

void Agent::Stop() {
  // Running profiles end early and answer with what they have, then the
  // server goes, so no scrape reads a half-stopped agent.
  if (profiler_) profiler_->Stop();
  if (http_) http_->Stop();
  if (sampler_) sampler_->Stop();
  if (peer_discovery_) peer_discovery_->Stop();
  if (discovery_) discovery_->Stop();
}

bool Agent::Ready(std::string* why) const {
  if (!history_.Latest()) {
    *why = "no sample taken yet";
    return false;
  }
  if (!discovery_ || !discovery_->stats().ready) {
    *why = "pod discovery (" + DiscoveryModeName() + ") has not listed pods";
    return false;
  }
  return true;
}

nlohmann::json Agent::ReportJson() const {
  nlohmann::json diagnoses = nlohmann::json::array();
  std::vector<JobPsShares> shares;
  std::vector<diagnosis::JobSpeed> speeds;
  std::vector<diagnosis::JobHeadroom> headroom;
  if (diagnosis_) {
    for (const auto& d : diagnosis_->Active()) {
      diagnoses.push_back(diagnosis::DiagnosisJson(d));
      AddProfileEvidence(diagnoses.back());
    }
    shares = PsSharesOf(diagnosis_->Jobs());
    speeds = diagnosis_->Speeds();
    headroom = diagnosis_->Headroom();
  }
  nlohmann::json report = ReportView(config_.node_name, *pods_.Get(), diagnoses,
                                     std::chrono::system_clock::now());
  SetPsTrafficShares(report, shares);
  SetJobSpeeds(report, speeds);
  SetJobHeadroom(report, headroom);
  AddPodNodes(report, *peer_pods_.Get());
  return report;
}

void Agent::AddProfileEvidence(nlohmann::json& diagnosis) const {
  static const std::set<std::string, std::less<>> kKinds = {
      std::string(diagnosis::kHotParameterServer),
      std::string(diagnosis::kPsCpuSaturated),
      std::string(diagnosis::kStragglerWorker),
      std::string(diagnosis::kAllreduceStraggler)};
  if (!continuous_ || !diagnosis.is_object() ||
      !kKinds.count(diagnosis.value("kind", "")) ||
      !diagnosis.contains("evidence") || !diagnosis["evidence"].is_object()) {
    return;
  }
  const std::string ns = diagnosis.value("namespace", "");
  const std::string pod = diagnosis.value("pod", "");
  // Held for the loop: a range-for over `*pods_.Get()` drops the temporary
  // pointer first, and discovery may free the list meanwhile (TSan).
  const std::shared_ptr<const PodList> pods = pods_.Get();
  for (const PodInfo& p : *pods) {
    if (p.namespace_name != ns || p.name != pod) continue;
    nlohmann::json top = TopFunctionsEvidence(continuous_->TopOf(p.uid, 5));
    if (!top.is_null()) {
      for (auto& [key, value] : top.items()) diagnosis["evidence"][key] = value;
    }
    nlohmann::json waits = WaitSitesEvidence(continuous_->TopWaitsOf(p.uid, 5));
    if (!waits.is_null()) {
      for (auto& [key, value] : waits.items()) {
        diagnosis["evidence"][key] = value;
      }
    }
    return;
  }
}

HttpResponse Agent::Report(const std::string& format) const {
  const nlohmann::json report = ReportJson();
  if (format == "text") {
    return {200, "text/plain; charset=utf-8", ReportText(report)};
  }
  return {200, "application/json", report.dump()};
}

HttpResponse Agent::Page() const {
  // Refreshes about every other sample, never more than every 5 s.
  const int refresh =
      std::max(5, static_cast<int>(std::ceil(2 * config_.interval_seconds)));
  return {200, "text/html; charset=utf-8",
          page::RenderReportPage(
              ReportJson(), {.agent_links = true, .refresh_seconds = refresh})};
}

}  // namespace trainscope
