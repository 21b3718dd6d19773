#include "discovery/apiserver_source.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>

#include "discovery/pod_json.h"
#include "discovery/watch_event.h"

namespace trainscope {
namespace {

using std::chrono::milliseconds;

double NowUnixSeconds() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Enough of an error body to recognise a Kubernetes Status or a proxy page.
std::string Excerpt(std::string_view body) {
  constexpr size_t kMax = 200;
  std::string out(body.substr(0, kMax));
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (body.size() > kMax) out += "...";
  return out;
}

std::string DescribeError(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "connection failed (refused or unreachable)";
    case httplib::Error::ConnectionTimeout:
      return "connection timed out";
    case httplib::Error::Read:
      return "stream broken while reading";
    case httplib::Error::SSLConnection:
      return "TLS handshake failed";
    case httplib::Error::SSLServerVerification:
      return "TLS server certificate not trusted (check the CA file)";
    case httplib::Error::SSLLoadingCerts:
      return "cannot load the CA certificates";
    default:
      return httplib::to_string(error);
  }
}

}  // namespace

ApiServerSource::ApiServerSource(ApiServerSourceOptions options,
                                 PodTable& table)
    : ApiServerSource(std::move(options), [&table](PodList pods) {
        table.Replace(std::move(pods));
      }) {}

ApiServerSource::ApiServerSource(ApiServerSourceOptions options,
                                 PodListSink sink)
    : options_(std::move(options)),
      query_{options_.node_name, options_.namespace_name,
             options_.label_selector},
      sink_(std::move(sink)) {}

ApiServerSource::~ApiServerSource() { Stop(); }

Status ApiServerSource::Start() {
  if (thread_.joinable())
    return Status::Error("apiserver source: started twice");
  Status st = ParseApiUrl(options_.api_url, &endpoint_);
  if (!st.ok()) return st;
  if (!options_.token_file.empty()) {
    std::string header;
    st = AuthHeader(&header);
    if (!st.ok()) return st;
  }
  if (!options_.ca_file.empty() && endpoint_.scheme == "https") {
    std::ifstream ca(options_.ca_file);
    if (!ca) {
      return Status::Error("kube CA file " + options_.ca_file +
                           ": cannot be read");
    }
  }
  if (options_.backoff_initial.count() <= 0 ||
      options_.backoff_max < options_.backoff_initial) {
    return Status::Error(
        "apiserver backoff bounds must satisfy 0 < initial <= max");
  }
  spdlog::info(
      "[discovery] watching {} of node '{}', namespace '{}', selector '{}' at "
      "{}",
      options_.log_name, options_.node_name.empty() ? "*" : options_.node_name,
      options_.namespace_name.empty() ? "*" : options_.namespace_name,
      options_.label_selector, options_.api_url);
  stop_.Reset();
  {
    std::lock_guard lock(exit_mu_);
    exited_ = false;
  }
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void ApiServerSource::Stop() {
  stop_.Request();
  if (!thread_.joinable()) return;
  // A blocked read only ends when its socket is shut down, and a request may
  // connect just after one stop(), so repeat until the worker has left.
  while (true) {
    {
      std::lock_guard lock(client_mu_);
      if (in_flight_ != nullptr) in_flight_->stop();
    }
    std::unique_lock lock(exit_mu_);
    if (exit_cv_.wait_for(lock, milliseconds(20), [this] { return exited_; })) {
      break;
    }
  }
  thread_.join();
}

DiscoveryStats ApiServerSource::stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

Status ApiServerSource::AuthHeader(std::string* header) const {
  header->clear();
  if (options_.token_file.empty()) return Status::Ok();
  // Re-read on every request: projected service-account tokens rotate.
  std::ifstream in(options_.token_file);
  if (!in) {
    return Status::Error("kube token file " + options_.token_file +
                         ": cannot be read");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  while (!token.empty() &&
         std::isspace(static_cast<unsigned char>(token.back()))) {
    token.pop_back();
  }
  if (token.empty()) {
    return Status::Error("kube token file " + options_.token_file + ": empty");
  }
  *header = "Bearer " + token;
  return Status::Ok();
}

std::unique_ptr<httplib::Client> ApiServerSource::MakeClient(
    std::chrono::seconds read_timeout) const {
  auto client = std::make_unique<httplib::Client>(endpoint_.Origin());
  client->set_connection_timeout(options_.connect_timeout);
  client->set_read_timeout(read_timeout);
  client->set_write_timeout(options_.request_timeout);
  if (endpoint_.scheme == "https") {
    client->enable_server_certificate_verification(true);
    if (!options_.ca_file.empty()) client->set_ca_cert_path(options_.ca_file);
  }
  return client;
}

bool ApiServerSource::BeginRequest(httplib::Client* client) {
  std::lock_guard lock(client_mu_);
  if (stop_.requested()) return false;
  in_flight_ = client;
  return true;
}

void ApiServerSource::EndRequest() {
  std::lock_guard lock(client_mu_);
  in_flight_ = nullptr;
}

void ApiServerSource::RecordError(const std::string& message,
                                  milliseconds retry_in) {
  size_t known = 0;
  {
    std::lock_guard lock(stats_mu_);
    ++stats_.errors_total;
  }
  failing_ = true;
  known = pods_.size();
  // Keyed by the error itself: a new kind of failure is logged at once.
  if (auto line = log_limiter_.Pass(
          message,
          fmt::format("apiserver {}; keeping {} known {}, retry in {} ms",
                      message, known, options_.log_name, retry_in.count()))) {
    spdlog::warn("[discovery] {}", *line);
  }
}

void ApiServerSource::MarkSuccess() {
  std::lock_guard lock(stats_mu_);
  stats_.last_success_unix_seconds = NowUnixSeconds();
}

void ApiServerSource::Publish() {
  PodList pods;
  pods.reserve(pods_.size());
  for (const auto& [uid, pod] : pods_) pods.push_back(pod);
  if (options_.identity_only) {
    // Identity was inferred on arrival, before the labels were dropped.
    sink_(SortPods(DropFinishedPods(std::move(pods))));
  } else {
    sink_(PreparePodsForPublish(std::move(pods), options_.label_schemes));
  }
}

namespace {

// What a peer table holds of a pod did not change (most watch events of
// other nodes' pods are status updates that change none of it).
bool SameIdentity(const PodInfo& a, const PodInfo& b) {
  return a.namespace_name == b.namespace_name && a.name == b.name &&
         a.node == b.node && a.phase == b.phase && a.pod_ip == b.pod_ip &&
         a.pod_ips == b.pod_ips && a.host_network == b.host_network &&
         a.training_job == b.training_job && a.role == b.role &&
         a.replica_index == b.replica_index && a.job_kind == b.job_kind &&
         a.framework == b.framework;
}

}  // namespace

void ApiServerSource::Ingest(PodInfo* pod) const {
  if (!options_.identity_only) return;
  ApplyTrainingIdentity(options_.label_schemes, pod);
  KeepIdentityOnly(pod);
}

Status ApiServerSource::ListPage(const std::string& continue_token,
                                 PodList* pods, std::string* resource_version,
                                 std::string* next) {
  std::string query;
  if (options_.list_page_size > 0) {
    query = "limit=" + std::to_string(options_.list_page_size);
    if (!continue_token.empty()) {
      query += "&continue=" + UrlEncode(continue_token);
    }
  }
  const std::string path = PodsPath(endpoint_, query_, query);
  const std::string what = "list GET " + options_.api_url + path;
  std::string auth;
  if (Status st = AuthHeader(&auth); !st.ok())
    return Status::Error(what + ": " + st.message());
  httplib::Headers headers = {{"Accept", "application/json"}};
  if (!auth.empty()) headers.emplace("Authorization", auth);
  auto client = MakeClient(options_.request_timeout);
  if (!BeginRequest(client.get())) return Status::Ok();
  std::string body;
  bool too_large = false;
  httplib::Result res =
      client->Get(path, headers, [&](const char* data, size_t size) {
        if (body.size() + size > options_.max_list_page_bytes) {
          too_large = true;
          return false;
        }
        body.append(data, size);
        return true;
      });
  EndRequest();
  if (stop_.requested()) return Status::Ok();
  if (too_large) {
    return Status::Error(
        what + ": the page is larger than " +
        std::to_string(options_.max_list_page_bytes >> 20) +
        " MiB (a page holds at most " +
        std::to_string(options_.list_page_size) +
        " pods); refused, the last known pods are kept; body starts: " +
        Excerpt(body));
  }
  if (!res) return Status::Error(what + ": " + DescribeError(res.error()));
  if (res->status != 200) {
    return Status::Error(what + ": HTTP " + std::to_string(res->status) + ": " +
                         Excerpt(body));
  }
  if (Status st = ParsePodList(body, pods, resource_version, next); !st.ok()) {
    return Status::Error(what + ": " + st.message() +
                         "; body starts: " + Excerpt(body));
  }
  return Status::Ok();
}

Status ApiServerSource::List() {
  // Pages of one list share one resourceVersion: the first page's, which
  // is where the watch resumes. A continue token that expired (410) fails
  // the list; the retry starts again from the first page.
  std::map<std::string, PodInfo> listed;
  std::string rv, continue_token;
  bool first_page = true;
  do {
    PodList page;
    std::string page_rv, next;
    if (Status st = ListPage(continue_token, &page, &page_rv, &next);
        !st.ok()) {
      return st;
    }
    if (stop_.requested()) return Status::Ok();
    if (first_page) rv = page_rv;
    first_page = false;
    for (auto& pod : page) {
      Ingest(&pod);
      std::string uid = pod.uid;
      listed.insert_or_assign(std::move(uid), std::move(pod));
    }
    continue_token = std::move(next);
  } while (!continue_token.empty());
  pods_ = std::move(listed);
  resource_version_ = rv;
  Publish();
  {
    std::lock_guard lock(stats_mu_);
    if (!stats_.ready) {
      spdlog::info("[discovery] apiserver: first list has {} {} (rv {})",
                   pods_.size(), options_.log_name, rv);
    } else if (failing_) {
      spdlog::info("[discovery] apiserver: list works again, {} {} (rv {})",
                   pods_.size(), options_.log_name, rv);
    }
    failing_ = false;
    log_limiter_.ClearAll();
    stats_.ready = true;
    stats_.last_success_unix_seconds = NowUnixSeconds();
  }
  return Status::Ok();
}

Status ApiServerSource::ApplyEvent(std::string_view line, bool* gone) {
  WatchEvent event;
  if (Status st = ParseWatchEvent(line, &event); !st.ok()) {
    return Status::Error(st.message() + "; line starts: " + Excerpt(line));
  }
  if (event.type == "ERROR") {
    if (event.error_code == 410) {
      spdlog::info("[discovery] apiserver watch: {} (410 Gone), re-listing",
                   event.error_message);
      *gone = true;
      return Status::Ok();
    }
    return Status::Error("watch ERROR event: code " +
                         std::to_string(event.error_code) + ": " +
                         event.error_message);
  }
  // Every non-error object carries the version to resume from.
  if (auto meta = event.object.find("metadata");
      meta != event.object.end() && meta->is_object()) {
    if (auto rv = meta->find("resourceVersion");
        rv != meta->end() && rv->is_string()) {
      resource_version_ = rv->get<std::string>();
    }
  }
  if (event.type == "BOOKMARK") return Status::Ok();
  PodInfo pod;
  if (Status st = ParsePod(event.object, &pod); !st.ok()) {
    return Status::Error("watch event " + event.type + ": " + st.message());
  }
  Ingest(&pod);
  bool changed = true;
  if (event.type == "DELETED") {
    changed = pods_.erase(pod.uid) > 0;
  } else if (auto it = pods_.find(pod.uid); options_.identity_only &&
                                            it != pods_.end() &&
                                            SameIdentity(it->second, pod)) {
    changed = false;
  } else {
    std::string uid = pod.uid;
    pods_[uid] = std::move(pod);
  }
  // A peer table of thousands of pods is copied on every publish: status
  // updates that change nothing it holds are not published.
  if (changed) Publish();
  MarkSuccess();
  return Status::Ok();
}

ApiServerSource::WatchEnd ApiServerSource::Watch(Status* error) {
  const std::string query =
      "watch=true&resourceVersion=" + UrlEncode(resource_version_) +
      "&allowWatchBookmarks=true&timeoutSeconds=" +
      std::to_string(options_.watch_timeout.count());
  const std::string path = PodsPath(endpoint_, query_, query);
  const std::string what = "watch GET " + options_.api_url + path;
  std::string auth;
  if (Status st = AuthHeader(&auth); !st.ok()) {
    *error = Status::Error(what + ": " + st.message());
    return WatchEnd::kError;
  }
  httplib::Headers headers = {{"Accept", "application/json"}};
  if (!auth.empty()) headers.emplace("Authorization", auth);
  // The server ends the stream after watch_timeout; a read that stays silent
  // well past that means a dead connection.
  auto client = MakeClient(options_.watch_timeout + std::chrono::seconds(30));

  int status = 0;
  std::string error_body;
  LineSplitter lines;
  bool gone = false;
  Status event_error = Status::Ok();
  auto on_response = [&](const httplib::Response& r) {
    status = r.status;
    return true;
  };
  auto on_data = [&](const char* data, size_t size) {
    if (stop_.requested()) return false;
    if (status != 200) {
      if (error_body.size() < 4096) error_body.append(data, size);
      return true;
    }
    return lines.Feed({data, size}, [&](std::string_view line) {
      event_error = ApplyEvent(line, &gone);
      return event_error.ok() && !gone && !stop_.requested();
    });
  };
  if (!BeginRequest(client.get())) return WatchEnd::kStopped;
  httplib::Result res = client->Get(path, headers, on_response, on_data);
  EndRequest();

  if (stop_.requested()) return WatchEnd::kStopped;
  if (gone) return WatchEnd::kGone;
  if (!event_error.ok()) {
    *error = Status::Error(what + ": " + event_error.message());
    return WatchEnd::kError;
  }
  if (lines.overflowed()) {
    *error = Status::Error(what + ": event line longer than 16 MiB");
    return WatchEnd::kError;
  }
  if (status == 410) return WatchEnd::kGone;
  if (status != 0 && status != 200) {
    if (res && error_body.empty()) error_body = res->body;
    *error = Status::Error(what + ": HTTP " + std::to_string(status) + ": " +
                           Excerpt(error_body));
    return WatchEnd::kError;
  }
  if (!res) {
    *error = Status::Error(what + ": " + DescribeError(res.error()));
    return WatchEnd::kError;
  }
  MarkSuccess();
  return WatchEnd::kClean;
}

void ApiServerSource::RunOnce(bool* need_list, milliseconds* backoff) {
  auto fail = [&](const Status& st) {
    RecordError(st.message(), *backoff);
    *need_list = true;
    stop_.WaitFor(*backoff);
    *backoff = std::min(*backoff * 2, options_.backoff_max);
  };
  if (*need_list) {
    Status st = List();
    if (stop_.requested()) return;
    if (!st.ok()) return fail(st);
    *need_list = false;
    *backoff = options_.backoff_initial;
  }
  const auto started = std::chrono::steady_clock::now();
  Status error = Status::Ok();
  const WatchEnd end = Watch(&error);
  if (end == WatchEnd::kStopped) return;
  if (end == WatchEnd::kError) return fail(error);
  // Clean ends (timeoutSeconds) renew the watch, 410 re-lists; neither is an
  // error, but a server that ends every watch at once must not make us spin.
  if (end == WatchEnd::kGone) *need_list = true;
  if (std::chrono::steady_clock::now() - started < std::chrono::seconds(1)) {
    stop_.WaitFor(options_.backoff_initial);
  }
}

void ApiServerSource::Run() {
  bool need_list = true;
  milliseconds backoff = options_.backoff_initial;
  while (!stop_.requested()) {
    try {
      RunOnce(&need_list, &backoff);
    } catch (const std::exception& e) {
      // Nothing may escape the thread; treat it like any failed round.
      RecordError(std::string("unexpected error: ") + e.what(), backoff);
      need_list = true;
      stop_.WaitFor(backoff);
      backoff = std::min(backoff * 2, options_.backoff_max);
    } catch (...) {
      RecordError("unexpected non-standard exception", backoff);
      need_list = true;
      stop_.WaitFor(backoff);
    }
  }
  std::lock_guard lock(exit_mu_);
  exited_ = true;
  exit_cv_.notify_all();
}

}  // namespace trainscope
