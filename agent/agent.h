#pragma once

#include <memory>

#include "config.h"
#include "diagnosis/runner.h"
#include "discovery/pod_source.h"
#include "exporter/exporter.h"
#include "http/server.h"
#include "profiler/continuous_profiler.h"
#include "profiler/profiler_service.h"
#include "sampling/history.h"
#include "sampling/sampler.h"
#include "trainscope/pod.h"

namespace trainscope {

// Wires discovery, sampling, export and the HTTP server together, and owns
// their lifetimes: Stop() (or the destructor) shuts everything down in the
// reverse order of Start().
class Agent {
 public:
  explicit Agent(AgentConfig config);
  ~Agent();

  // Binds the port, starts discovery, the sampler and the server. Any error
  // is returned with context and leaves nothing running.
  Status Start();
  void Stop();
  int http_port() const { return http_ ? http_->port() : 0; }

 private:
  // Start()'s steps, in order.
  void MakeProfilers();
  Status BindHttp();  // resets http_ when the port cannot be bound
  // Pod discovery and the peer-pod watch; on error neither runs.
  Status StartDiscovery();
  void MakeSampler();  // with the diagnosis runner it calls after each cycle
  std::vector<FamilySection> ExportSections();
  void MakeExporter();
  // --discovery as its flag spells it (metric labels, logs).
  std::string DiscoveryModeName() const;
  bool Ready(std::string* why) const;
  void LogWebSecurity() const;
  nlohmann::json ReportJson() const;
  // Adds the pod's top functions (continuous profile) to the evidence of
  // the diagnoses that ask "what is this pod doing?".
  void AddProfileEvidence(nlohmann::json& diagnosis) const;
  HttpResponse Report(const std::string& format) const;
  // GET /: the report page of this node.
  HttpResponse Page() const;

  AgentConfig config_;
  PodTable pods_;
  // Pods of other nodes (peer-pod watch); only names flow peers.
  PodTable peer_pods_;
  History history_;
  std::unique_ptr<PodSource> discovery_;
  std::unique_ptr<PodSource> peer_discovery_;  // null when off
  // Declared before the sampler, whose thread calls it, so it outlives it.
  std::unique_ptr<diagnosis::DiagnosisRunner> diagnosis_;
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<Exporter> exporter_;
  // On-demand profiles (null with --profiler off); shared with the
  // collector reporting its health. Stopped before the HTTP server so a
  // running profile ends early and its request is answered.
  std::shared_ptr<profiler::ProfilerService> profiler_;
  // Continuous low-rate profile of the training pods (null when off);
  // drained by the profiler collector, read by the report's evidence.
  std::shared_ptr<profiler::ContinuousProfiler> continuous_;
  std::unique_ptr<HttpServer> http_;
};

}  // namespace trainscope
