#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "discovery/api_endpoint.h"
#include "discovery/discovery_config.h"
#include "discovery/pod_source.h"
#include "discovery/roles.h"
#include "discovery/stop_signal.h"
#include "trainscope/log_limiter.h"
#include "trainscope/pod.h"

namespace httplib {
class Client;
}

namespace trainscope {

struct ApiServerSourceOptions {
  std::string api_url;     // "https://10.96.0.1:443", "http://127.0.0.1:8001"
  std::string token_file;  // "" sends no Authorization header
  std::string ca_file;     // "" uses the system trust store (https only)
  std::string node_name;   // "" lists every pod of the cluster
  // Further restrictions (the peer-pod watch): one namespace's pods, and
  // pods matching a Kubernetes label selector ("" = no restriction).
  std::string namespace_name;
  std::string label_selector;
  // Names the watch in logs: "pods", "peer pods".
  std::string log_name = "pods";
  // Keep only what names a pod (identity, IPs, node, training identity),
  // inferred as each pod arrives: the peer-pod watch holds thousands of
  // pods of other nodes and needs nothing else of them.
  bool identity_only = false;
  // Pods per list page (limit/continue), so a cluster-wide list never
  // arrives as one huge answer; 0 = one page.
  int list_page_size = 500;
  // A list page larger than this is refused (the last known pods are
  // kept): a page of 500 pods is a few MiB, so more is a misbehaving server
  // or proxy, and reading on would let it grow the agent without bound.
  size_t max_list_page_bytes = 64u << 20;

  std::vector<LabelScheme> label_schemes = DefaultLabelSchemes();
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{30000};
  // timeoutSeconds asked of the server; the watch is then renewed from the
  // last resourceVersion without a re-list.
  std::chrono::seconds watch_timeout{300};
  std::chrono::seconds request_timeout{30};
  std::chrono::seconds connect_timeout{3};
};

// Receives every new complete pod list (on the source's thread).
using PodListSink = std::function<void(PodList)>;

// `apiserver` discovery: list, then watch, the node's pods (or, for the
// peer-pod watch, the pods the query names). Any failure keeps the last
// known pods, counts an error and re-lists after an exponential backoff; a
// dead API server therefore never empties the pod table.
class ApiServerSource : public PodSource {
 public:
  ApiServerSource(ApiServerSourceOptions options, PodTable& table);
  ApiServerSource(ApiServerSourceOptions options, PodListSink sink);
  ~ApiServerSource() override;

  std::string_view name() const override {
    return NameOfEnum(kDiscoveryModeNames, DiscoveryMode::kApiServer);
  }
  Status Start() override;
  void Stop() override;
  DiscoveryStats stats() const override;

 private:
  enum class WatchEnd { kClean, kGone, kStopped, kError };

  void Run();
  void RunOnce(bool* need_list, std::chrono::milliseconds* backoff);
  Status List();
  Status ListPage(const std::string& continue_token, PodList* pods,
                  std::string* resource_version, std::string* next);
  // Infers and slims a pod as it arrives (identity_only).
  void Ingest(PodInfo* pod) const;

  WatchEnd Watch(Status* error);
  Status ApplyEvent(std::string_view line, bool* gone);
  void Publish();
  void RecordError(const std::string& message,
                   std::chrono::milliseconds retry_in);
  void MarkSuccess();
  // Fresh client per request: the token may have rotated and a stopped
  // client cannot be reused.
  std::unique_ptr<httplib::Client> MakeClient(
      std::chrono::seconds read_timeout) const;
  Status AuthHeader(std::string* header) const;
  // Registers the in-flight client so Stop() can shut its socket down;
  // false when stopping already.
  bool BeginRequest(httplib::Client* client);
  void EndRequest();

  const ApiServerSourceOptions options_;
  ApiEndpoint endpoint_;
  PodsQuery query_;
  PodListSink sink_;
  StopSignal stop_;
  std::thread thread_;

  // Owned by the worker thread.
  std::map<std::string, PodInfo> pods_;  // by uid

  std::string resource_version_;
  bool failing_ = false;  // since the last successful list
  // An API server down for hours must not log every retry.
  LogLimiter log_limiter_;

  std::mutex client_mu_;
  httplib::Client* in_flight_ = nullptr;
  std::mutex exit_mu_;
  std::condition_variable exit_cv_;
  bool exited_ = false;

  mutable std::mutex stats_mu_;
  DiscoveryStats stats_;
};

}  // namespace trainscope
