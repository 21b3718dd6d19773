#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "api_selectors.h"

namespace httplib {
class Server;
class Request;
class Response;
}  // namespace httplib

namespace trainscope::testing {

struct FakeApiServerOptions {
  // When set, requests without "Authorization: Bearer <token>" get 401.
  std::string required_token;
  // How long an idle watch stream waits before re-checking for events,
  // stop and its timeout (bounds how fast Stop() ends open watches).
  std::chrono::milliseconds watch_poll{50};
};

struct RecordedRequest {
  std::string method;
  std::string path;                           // without the query
  std::map<std::string, std::string> params;  // decoded query parameters
  std::string authorization;
  int injected_status = 0;  // status of a FailNext answer, 0 otherwise
};

// Which pods a list or watch returns.
struct PodFilter {
  std::vector<FieldTerm> fields;  // fieldSelector (spec.nodeName, ...)
  std::string namespace_name;     // /api/v1/namespaces/{ns}/pods
  std::vector<LabelTerm> labels;  // labelSelector (equality and set-based)
};

// A Kubernetes API server for pods, small enough for tests and the trainsim
// simulator: list and watch of /api/v1/pods (field selectors on
// spec.nodeName/metadata.name/metadata.namespace with = and !=, label
// selectors with equality and set-based terms, the namespaced collection
// /api/v1/namespaces/{ns}/pods, resourceVersion, timeoutSeconds, bookmarks, 410
// after compaction), GET of one pod, bearer-token auth and fault injection.
// Pods are kept as the JSON objects the real server would return.
class FakeApiServer {
 public:
  explicit FakeApiServer(FakeApiServerOptions options = {});
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  // Listens on 127.0.0.1 and an ephemeral port (or `port` when non-zero).
  bool Start(std::string* error = nullptr, int port = 0);
  // Closes the listener and breaks every open watch stream mid-way, as a
  // crashing API server would. Pods and history survive.
  void Stop();
  // Start again on the same port.
  bool Restart(std::string* error = nullptr);
  bool running() const;
  int port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:<port>"

  // Mutations bump the resourceVersion, stamp it into the pod's metadata,
  // and emit a watch event; each returns the new resourceVersion.
  uint64_t AddPod(nlohmann::json pod);
  // Replaces the pod with the same namespace/name (adds it if absent).
  uint64_t ModifyPod(nlohmann::json pod);
  // 0 when no such pod.
  uint64_t DeletePod(const std::string& namespace_name,
                     const std::string& name);
  // Forgets history: a watch from an older resourceVersion gets ERROR 410.
  void Compact();
  void SendBookmark();
  // Sends a raw line (e.g. malformed JSON) to every open watch.
  void SendRawWatchLine(std::string line);
  // Ends every open watch cleanly, as the server does at timeoutSeconds.
  void EndWatches();

  // The next `count` requests (list, watch or get) are answered with this
  // status and body instead (200 with a broken body simulates bad JSON).
  void FailNext(int status, std::string body, int count = 1);
  void SetRequiredToken(std::string token);

  uint64_t resource_version() const;
  std::vector<nlohmann::json> pods() const;
  std::vector<RecordedRequest> requests() const;
  size_t open_watches() const;

  bool WaitForRequests(
      const std::function<bool(const std::vector<RecordedRequest>&)>& done,
      std::chrono::milliseconds timeout) const;
  bool WaitForOpenWatches(size_t at_least,
                          std::chrono::milliseconds timeout) const;

  // A Kubernetes Status object, as the server sends for errors.
  static nlohmann::json StatusObject(int code, const std::string& reason,
                                     const std::string& message);

 private:
  struct Event {
    uint64_t rv;
    std::string line;       // serialized watch event, newline-terminated
    nlohmann::json object;  // the pod (watch filters match against it)
    bool always = false;    // raw lines and bookmarks reach every watch
  };
  struct Failure {
    int status;
    std::string body;
  };

  void InstallHandlers(httplib::Server& server);
  void HandleList(const httplib::Request& req, httplib::Response& res,
                  const std::string& namespace_name);
  void HandleWatch(const httplib::Request& req, httplib::Response& res,
                   const std::string& namespace_name);
  static bool ParseFilter(const httplib::Request& req,
                          const std::string& namespace_name, PodFilter* filter,
                          std::string* error);
  void HandleGetPod(const httplib::Request& req, httplib::Response& res);
  uint64_t EmitLocked(const std::string& type, const nlohmann::json& object,
                      bool always);
  static std::string Key(const nlohmann::json& pod);

  const FakeApiServerOptions options_;
  int port_ = 0;
  std::unique_ptr<httplib::Server> server_;
  std::thread listen_thread_;

  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::string required_token_;
  uint64_t rv_ = 1;
  uint64_t compacted_rv_ = 0;
  uint64_t epoch_ = 0;       // bumped by Stop and EndWatches: open watches end
  bool broken_end_ = false;  // whether the last epoch bump was Stop
  std::map<std::string, nlohmann::json> pods_;  // by namespace/name
  std::vector<Event> events_;
  std::deque<Failure> failures_;
  std::vector<RecordedRequest> requests_;
  size_t open_watches_ = 0;
};

}  // namespace trainscope::testing
