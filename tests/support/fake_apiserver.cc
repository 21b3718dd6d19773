#include "fake_apiserver.h"

#include <httplib.h>

#include <algorithm>

namespace trainscope::testing {
namespace {

using nlohmann::json;

bool PodMatches(const PodFilter& filter, const json& pod) {
  if (!FieldsMatch(filter.fields, pod)) return false;
  const json empty = json::object();
  const json& meta = pod.contains("metadata") ? pod["metadata"] : empty;
  if (!filter.namespace_name.empty() &&
      meta.value("namespace", "default") != filter.namespace_name) {
    return false;
  }
  return LabelsMatch(filter.labels,
                     meta.contains("labels") ? meta["labels"] : empty);
}

void SendStatus(httplib::Response& res, int code, const std::string& reason,
                const std::string& message) {
  res.status = code;
  res.set_content(FakeApiServer::StatusObject(code, reason, message).dump(),
                  "application/json");
}

}  // namespace

json FakeApiServer::StatusObject(int code, const std::string& reason,
                                 const std::string& message) {
  return {
      {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
      {"status", "Failure"}, {"message", message}, {"reason", reason},
      {"code", code}};
}

FakeApiServer::FakeApiServer(FakeApiServerOptions options)
    : options_(std::move(options)), required_token_(options_.required_token) {}

FakeApiServer::~FakeApiServer() { Stop(); }

std::string FakeApiServer::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

bool FakeApiServer::running() const { return server_ != nullptr; }

namespace {
constexpr size_t kWatchThreads = 256;
}  // namespace

bool FakeApiServer::Start(std::string* error, int port) {
  if (server_) return true;
  auto server = std::make_unique<httplib::Server>();
  // Every watch holds a server thread for its whole life; agents hold one
  // watch for their node's pods plus one per peer selector (8 with the
  // defaults), and a trainsim cluster runs several agents. The real API
  // server serves thousands of watches, so the pool must not be what limits.
  server->new_task_queue = [] {
    return new httplib::ThreadPool(kWatchThreads);
  };
  InstallHandlers(*server);
  if (port == 0) {
    port_ = server->bind_to_any_port("127.0.0.1");
    if (port_ < 0) {
      if (error) *error = "fake apiserver: cannot bind 127.0.0.1";
      return false;
    }
  } else {
    // The old listener's port may linger briefly; retry within a bound.
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!server->bind_to_port("127.0.0.1", port)) {
      if (std::chrono::steady_clock::now() >= deadline) {
        if (error) {
          *error =
              "fake apiserver: cannot bind 127.0.0.1:" + std::to_string(port);
        }
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    port_ = port;
  }
  server_ = std::move(server);
  listen_thread_ =
      std::thread([srv = server_.get()] { srv->listen_after_bind(); });
  // httplib's stop() is a no-op until the accept loop runs, so a Stop()
  // right after Start() would hang the join: wait for the loop.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!server_->is_running()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      if (error) *error = "fake apiserver: accept loop did not start";
      Stop();
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void FakeApiServer::Stop() {
  if (!server_) return;
  {
    std::lock_guard lock(mu_);
    ++epoch_;
    broken_end_ = true;
  }
  changed_.notify_all();
  server_->stop();
  if (listen_thread_.joinable()) listen_thread_.join();
  server_.reset();
}

bool FakeApiServer::Restart(std::string* error) {
  Stop();
  return Start(error, port_);
}

void FakeApiServer::InstallHandlers(httplib::Server& server) {
  server.set_pre_routing_handler(
      [this](const httplib::Request& req, httplib::Response& res) {
        RecordedRequest record;
        record.method = req.method;
        record.path = req.path;
        for (const auto& [k, v] : req.params) record.params[k] = v;
        record.authorization = req.get_header_value("Authorization");
        std::unique_lock lock(mu_);
        auto handled = httplib::Server::HandlerResponse::Unhandled;
        if (!failures_.empty()) {
          Failure f = std::move(failures_.front());
          failures_.pop_front();
          record.injected_status = f.status;
          res.status = f.status;
          res.set_content(f.body, "application/json");
          handled = httplib::Server::HandlerResponse::Handled;
        } else if (!required_token_.empty() &&
                   record.authorization != "Bearer " + required_token_) {
          SendStatus(res, 401, "Unauthorized", "Unauthorized");
          handled = httplib::Server::HandlerResponse::Handled;
        }
        requests_.push_back(std::move(record));
        lock.unlock();
        changed_.notify_all();
        return handled;
      });
  server.Get("/api/v1/pods",
             [this](const httplib::Request& req, httplib::Response& res) {
               const std::string watch = req.get_param_value("watch");
               if (watch == "true" || watch == "1") {
                 HandleWatch(req, res, "");
               } else {
                 HandleList(req, res, "");
               }
             });
  server.Get("/api/v1/namespaces/([^/]+)/pods",
             [this](const httplib::Request& req, httplib::Response& res) {
               const std::string watch = req.get_param_value("watch");
               if (watch == "true" || watch == "1") {
                 HandleWatch(req, res, req.matches[1]);
               } else {
                 HandleList(req, res, req.matches[1]);
               }
             });
  server.Get("/api/v1/namespaces/([^/]+)/pods/([^/]+)",
             [this](const httplib::Request& req, httplib::Response& res) {
               HandleGetPod(req, res);
             });
}

void FakeApiServer::HandleList(const httplib::Request& req,
                               httplib::Response& res,
                               const std::string& namespace_name) {
  PodFilter filter;
  if (std::string error; !ParseFilter(req, namespace_name, &filter, &error)) {
    return SendStatus(res, 400, "BadRequest", error);
  }
  // limit/continue as the real server pages: the token says where the
  // previous page ended (here: after which namespace/name key).
  size_t limit = 0;
  if (req.has_param("limit")) {
    try {
      limit = std::stoul(req.get_param_value("limit"));
    } catch (const std::exception&) {
      return SendStatus(res, 400, "BadRequest", "limit must be a number");
    }
  }
  std::string after;
  if (const std::string token = req.get_param_value("continue");
      !token.empty()) {
    if (token.rfind("after:", 0) != 0) {
      return SendStatus(res, 400, "BadRequest", "invalid continue token");
    }
    after = token.substr(6);
  }
  std::lock_guard lock(mu_);
  json items = json::array();
  std::string last_key;
  size_t remaining = 0;
  for (auto it = after.empty() ? pods_.begin() : pods_.upper_bound(after);
       it != pods_.end(); ++it) {
    if (!PodMatches(filter, it->second)) continue;
    if (limit > 0 && items.size() == limit) {
      ++remaining;
      continue;
    }
    items.push_back(it->second);
    last_key = it->first;
  }
  json meta = {{"resourceVersion", std::to_string(rv_)}};
  if (remaining > 0) {
    meta["continue"] = "after:" + last_key;
    meta["remainingItemCount"] = remaining;
  }
  json list = {{"kind", "PodList"},
               {"apiVersion", "v1"},
               {"metadata", std::move(meta)},
               {"items", std::move(items)}};
  res.set_content(list.dump(), "application/json");
}

void FakeApiServer::HandleGetPod(const httplib::Request& req,
                                 httplib::Response& res) {
  const std::string key =
      std::string(req.matches[1]) + "/" + std::string(req.matches[2]);
  std::lock_guard lock(mu_);
  auto it = pods_.find(key);
  if (it == pods_.end()) {
    return SendStatus(res, 404, "NotFound",
                      "pods \"" + std::string(req.matches[2]) + "\" not found");
  }
  res.set_content(it->second.dump(), "application/json");
}

bool FakeApiServer::ParseFilter(const httplib::Request& req,
                                const std::string& namespace_name,
                                PodFilter* filter, std::string* error) {
  filter->namespace_name = namespace_name;
  if (!ParseFieldSelector(req.get_param_value("fieldSelector"),
                          &filter->fields)) {
    *error = "unsupported field selector \"" +
             req.get_param_value("fieldSelector") + "\"";
    return false;
  }
  if (!ParseLabelSelector(req.get_param_value("labelSelector"),
                          &filter->labels)) {
    *error = "unsupported label selector \"" +
             req.get_param_value("labelSelector") + "\"";
    return false;
  }
  return true;
}

void FakeApiServer::HandleWatch(const httplib::Request& req,
                                httplib::Response& res,
                                const std::string& namespace_name) {
  struct WatchState {
    PodFilter filter;
    size_t next = 0;
    uint64_t epoch = 0;
    std::string initial;
    bool end_after_initial = false;
    std::chrono::steady_clock::time_point deadline;
  };
  auto st = std::make_shared<WatchState>();
  if (std::string error;
      !ParseFilter(req, namespace_name, &st->filter, &error)) {
    return SendStatus(res, 400, "BadRequest", error);
  }
  int timeout_s = 1800;
  if (req.has_param("timeoutSeconds")) {
    try {
      timeout_s = std::stoi(req.get_param_value("timeoutSeconds"));
    } catch (const std::exception&) {
      return SendStatus(res, 400, "BadRequest", "bad timeoutSeconds");
    }
  }
  st->deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  const std::string rv_text = req.get_param_value("resourceVersion");
  uint64_t from = 0;
  try {
    from = rv_text.empty() ? 0 : std::stoull(rv_text);
  } catch (const std::exception&) {
    return SendStatus(res, 400, "BadRequest",
                      "bad resourceVersion \"" + rv_text + "\"");
  }
  {
    std::lock_guard lock(mu_);
    st->epoch = epoch_;
    if (from == 0) {
      // "Any version": the current state as synthetic ADDED events.
      for (const auto& [key, pod] : pods_) {
        if (!PodMatches(st->filter, pod)) continue;
        st->initial += json{{"type", "ADDED"}, {"object", pod}}.dump() + "\n";
      }
      st->next = events_.size();
    } else if (from < compacted_rv_) {
      json gone = StatusObject(410, "Expired",
                               "too old resource version: " + rv_text + " (" +
                                   std::to_string(compacted_rv_) + ")");
      st->initial = json{{"type", "ERROR"}, {"object", gone}}.dump() + "\n";
      st->end_after_initial = true;
      st->next = events_.size();  // the error is all this stream carries
    } else {
      while (st->next < events_.size() && events_[st->next].rv <= from) {
        ++st->next;
      }
    }
    ++open_watches_;
  }
  changed_.notify_all();
  res.set_chunked_content_provider(
      "application/json",
      [this, st](size_t, httplib::DataSink& sink) {
        std::string out;
        bool end_clean = st->end_after_initial;
        {
          std::unique_lock lock(mu_);
          if (st->initial.empty()) {
            changed_.wait_for(lock, options_.watch_poll, [&] {
              return epoch_ != st->epoch || st->next < events_.size();
            });
          }
          out = std::move(st->initial);
          st->initial.clear();
          if (epoch_ != st->epoch) {
            // Stop() breaks the stream (no final chunk); EndWatches() ends
            // it the way a server timeout does.
            if (broken_end_) return false;
            end_clean = true;
          }
          for (; st->next < events_.size(); ++st->next) {
            const Event& e = events_[st->next];
            if (e.always || PodMatches(st->filter, e.object)) {
              out += e.line;
            }
          }
        }
        if (!out.empty() && !sink.write(out.data(), out.size())) return false;
        if (end_clean || std::chrono::steady_clock::now() >= st->deadline) {
          sink.done();
        }
        return true;
      },
      [this](bool) {
        {
          std::lock_guard lock(mu_);
          --open_watches_;
        }
        changed_.notify_all();
      });
}

std::string FakeApiServer::Key(const json& pod) {
  const json& meta = pod.at("metadata");
  return meta.value("namespace", "default") + "/" +
         meta.at("name").get<std::string>();
}

uint64_t FakeApiServer::EmitLocked(const std::string& type, const json& object,
                                   bool always) {
  events_.push_back(
      Event{rv_, json{{"type", type}, {"object", object}}.dump() + "\n", object,
            always});
  return rv_;
}

uint64_t FakeApiServer::AddPod(json pod) {
  uint64_t rv;
  {
    std::lock_guard lock(mu_);
    rv = ++rv_;
    pod["metadata"]["resourceVersion"] = std::to_string(rv);
    const std::string key = Key(pod);
    const bool existed = pods_.count(key) > 0;
    pods_[key] = pod;
    EmitLocked(existed ? "MODIFIED" : "ADDED", pod, false);
  }
  changed_.notify_all();
  return rv;
}

uint64_t FakeApiServer::ModifyPod(json pod) { return AddPod(std::move(pod)); }

uint64_t FakeApiServer::DeletePod(const std::string& namespace_name,
                                  const std::string& name) {
  uint64_t rv;
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(namespace_name + "/" + name);
    if (it == pods_.end()) return 0;
    rv = ++rv_;
    json pod = std::move(it->second);
    pods_.erase(it);
    pod["metadata"]["resourceVersion"] = std::to_string(rv);
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T01:00:00Z";
    EmitLocked("DELETED", pod, false);
  }
  changed_.notify_all();
  return rv;
}

void FakeApiServer::Compact() {
  std::lock_guard lock(mu_);
  compacted_rv_ = rv_;
}

void FakeApiServer::SendBookmark() {
  {
    std::lock_guard lock(mu_);
    json object = {{"kind", "Pod"},
                   {"apiVersion", "v1"},
                   {"metadata", {{"resourceVersion", std::to_string(rv_)}}}};
    EmitLocked("BOOKMARK", object, true);
  }
  changed_.notify_all();
}

void FakeApiServer::SendRawWatchLine(std::string line) {
  {
    std::lock_guard lock(mu_);
    if (line.empty() || line.back() != '\n') line += "\n";
    events_.push_back(Event{rv_, std::move(line), "", true});
  }
  changed_.notify_all();
}

void FakeApiServer::EndWatches() {
  {
    std::lock_guard lock(mu_);
    ++epoch_;
    broken_end_ = false;
  }
  changed_.notify_all();
}

void FakeApiServer::FailNext(int status, std::string body, int count) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < count; ++i) failures_.push_back({status, body});
}

void FakeApiServer::SetRequiredToken(std::string token) {
  std::lock_guard lock(mu_);
  required_token_ = std::move(token);
}

uint64_t FakeApiServer::resource_version() const {
  std::lock_guard lock(mu_);
  return rv_;
}

std::vector<json> FakeApiServer::pods() const {
  std::lock_guard lock(mu_);
  std::vector<json> out;
  for (const auto& [key, pod] : pods_) out.push_back(pod);
  return out;
}

std::vector<RecordedRequest> FakeApiServer::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

size_t FakeApiServer::open_watches() const {
  std::lock_guard lock(mu_);
  return open_watches_;
}

bool FakeApiServer::WaitForRequests(
    const std::function<bool(const std::vector<RecordedRequest>&)>& done,
    std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, timeout, [&] { return done(requests_); });
}

bool FakeApiServer::WaitForOpenWatches(
    size_t at_least, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, timeout,
                           [&] { return open_watches_ >= at_least; });
}

}  // namespace trainscope::testing
