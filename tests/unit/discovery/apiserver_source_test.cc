#include "discovery/apiserver_source.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "fake_apiserver.h"
#include "log_capture.h"
#include "pod_builder.h"
#include "test_wait.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::FakeApiServer;
using testing::FakePod;
using testing::LogCapture;
using testing::RecordedRequest;
using testing::WaitUntil;

constexpr char kToken[] = "s3cr3t-token";

nlohmann::json Pod(const std::string& name, const std::string& node = "node-a",
                   std::map<std::string, std::string> labels = {}) {
  FakePod p;
  p.name = name;
  p.namespace_name = "training";
  p.node = node;
  p.pod_ip = "10.244.0.9";
  p.labels = std::move(labels);
  p.containers[0].id = std::string(64, 'c');
  return p.Build();
}

class ApiServerSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "apisrc-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    WriteToken(kToken);
    testing::FakeApiServerOptions o;
    o.required_token = kToken;
    o.watch_poll = 10ms;
    server_ = std::make_unique<FakeApiServer>(o);
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
    server_->AddPod(Pod("ctr-ps-0"));
    server_->AddPod(Pod("ctr-worker-0"));
    server_->AddPod(Pod("other-worker-0", "node-b"));
  }
  void TearDown() override {
    source_.reset();  // before the server, so no request races its stop
    server_.reset();
    fs::remove_all(dir_);
  }

  void WriteToken(const std::string& token) {
    std::ofstream(dir_ / "token") << token << "\n";
  }
  ApiServerSourceOptions Options() {
    ApiServerSourceOptions o;
    o.api_url = server_->url();
    o.token_file = (dir_ / "token").string();
    o.node_name = "node-a";
    o.backoff_initial = 20ms;
    o.backoff_max = 100ms;
    o.watch_timeout = 30s;
    return o;
  }
  void StartSource(ApiServerSourceOptions o) {
    source_ = std::make_unique<ApiServerSource>(std::move(o), table_);
    Status st = source_->Start();
    ASSERT_TRUE(st.ok()) << st.message();
  }
  // Started, first list done, watch open.
  void StartAndSync() {
    ASSERT_NO_FATAL_FAILURE(StartSource(Options()));
    ASSERT_TRUE(WaitUntil([&] { return source_->stats().ready; }));
    ASSERT_TRUE(server_->WaitForOpenWatches(1, 5s));
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    auto pods = table_.Get();  // keeps the list alive through the loop
    for (const auto& p : *pods) out.push_back(p.name);
    return out;
  }
  bool WaitForNames(const std::vector<std::string>& want) {
    return WaitUntil([&] { return Names() == want; });
  }
  size_t CountRequests(bool watch) const {
    size_t n = 0;
    for (const auto& r : server_->requests()) {
      auto it = r.params.find("watch");
      if ((it != r.params.end() && it->second == "true") == watch) ++n;
    }
    return n;
  }

  // First, so it is installed before the source's thread starts and removed
  // only after TearDown stopped it: spdlog's default logger may not be
  // replaced while another thread logs through it (TSan found it).
  LogCapture logs;
  fs::path dir_;
  std::unique_ptr<FakeApiServer> server_;
  PodTable table_;
  std::unique_ptr<ApiServerSource> source_;
};

TEST_F(ApiServerSourceTest, ListsThenFollowsTheWatch) {
  ASSERT_NO_FATAL_FAILURE(StartAndSync());
  EXPECT_EQ(Names(), (std::vector<std::string>{"ctr-ps-0", "ctr-worker-0"}));
  const auto listed = table_.Get();
  const PodInfo& ps = listed->front();
  EXPECT_EQ(ps.role, Role::kPs);
  EXPECT_EQ(ps.training_job, "ctr");
  EXPECT_EQ(ps.pod_ip, "10.244.0.9");
  EXPECT_EQ(ps.containers.at(0).runtime, "containerd");
  EXPECT_GT(source_->stats().last_success_unix_seconds, 0);

  // Requests: a list and a watch for this node only, with the bearer token.
  auto requests = server_->requests();
  ASSERT_GE(requests.size(), 2u);
  EXPECT_EQ(requests[0].path, "/api/v1/pods");
  EXPECT_EQ(requests[0].params.at("fieldSelector"), "spec.nodeName=node-a");
  EXPECT_EQ(requests[0].params.count("watch"), 0u);
  EXPECT_EQ(requests[0].authorization, std::string("Bearer ") + kToken);
  EXPECT_EQ(requests[1].params.at("watch"), "true");
  EXPECT_EQ(requests[1].params.at("resourceVersion"), "4");
  EXPECT_EQ(requests[1].params.at("allowWatchBookmarks"), "true");
  EXPECT_EQ(requests[1].params.at("timeoutSeconds"), "30");
  EXPECT_EQ(requests[1].params.at("fieldSelector"), "spec.nodeName=node-a");
  EXPECT_EQ(requests[1].authorization, std::string("Bearer ") + kToken);

  server_->AddPod(Pod("ctr-worker-1"));
  ASSERT_TRUE(WaitForNames({"ctr-ps-0", "ctr-worker-0", "ctr-worker-1"}));

  // MODIFIED: new labels change the inferred identity.
  server_->ModifyPod(Pod("ctr-worker-1", "node-a",
                         {{"training.kubeflow.org/job-name", "renamed"},
                          {"training.kubeflow.org/replica-type", "evaluator"},
                          {"training.kubeflow.org/replica-index", "0"}}));
  ASSERT_TRUE(WaitUntil([&] {
    auto pods = table_.Get();
    return pods->size() == 3 && (*pods)[2].role == Role::kEvaluator &&
           (*pods)[2].training_job == "renamed";
  }));

  server_->DeletePod("training", "ctr-ps-0");
  ASSERT_TRUE(WaitForNames({"ctr-worker-0", "ctr-worker-1"}));

  // Another node's pod never shows up.
  server_->AddPod(Pod("far-ps-0", "node-b"));
  server_->AddPod(Pod("ctr-worker-2"));
  ASSERT_TRUE(WaitForNames({"ctr-worker-0", "ctr-worker-1", "ctr-worker-2"}));

  // A pod that finished is dropped though the API still holds it.
  auto done = Pod("ctr-worker-2");
  done["status"]["phase"] = "Succeeded";
  server_->ModifyPod(done);
  ASSERT_TRUE(WaitForNames({"ctr-worker-0", "ctr-worker-1"}));

  EXPECT_EQ(CountRequests(false), 1u);  // no re-list was needed
  EXPECT_EQ(source_->stats().errors_total, 0u);
}

TEST_F(ApiServerSourceTest, EmptyNodeNameMeansAllPods) {
  auto o = Options();
  o.node_name = "";
  ASSERT_NO_FATAL_FAILURE(StartSource(o));
  ASSERT_TRUE(WaitForNames({"ctr-ps-0", "ctr-worker-0", "other-worker-0"}));
  EXPECT_EQ(server_->requests().at(0).params.count("fieldSelector"), 0u);
}

TEST_F(ApiServerSourceTest, PeerWatchSeesLabelledPodsOnEveryNode) {
  const std::map<std::string, std::string> kubeflow = {
      {"training.kubeflow.org/job-name", "far"},
      {"training.kubeflow.org/replica-type", "ps"},
      {"training.kubeflow.org/replica-index", "0"}};
  server_->AddPod(Pod("far-ps-0", "node-b", kubeflow));
  auto o = Options();
  o.node_name = "";
  o.label_selector = "training.kubeflow.org/job-name";
  o.log_name = "peer pods";
  ASSERT_NO_FATAL_FAILURE(StartSource(o));
  ASSERT_TRUE(WaitForNames({"far-ps-0"}));
  const auto pods = table_.Get();
  EXPECT_EQ(pods->front().node, "node-b");
  EXPECT_EQ(pods->front().role, Role::kPs);
  EXPECT_EQ(pods->front().training_job, "far");
  const auto requests = server_->requests();
  ASSERT_GE(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/api/v1/pods");
  EXPECT_EQ(requests[0].params.at("labelSelector"),
            "training.kubeflow.org/job-name");
  EXPECT_EQ(requests[0].params.count("fieldSelector"), 0u);

  // The watch carries the selector too: unlabelled pods never arrive.
  ASSERT_TRUE(server_->WaitForOpenWatches(1, 5s));
  auto worker = kubeflow;
  worker["training.kubeflow.org/replica-type"] = "worker";
  server_->AddPod(Pod("plain-0", "node-c"));
  server_->AddPod(Pod("far-worker-0", "node-c", worker));
  ASSERT_TRUE(WaitForNames({"far-ps-0", "far-worker-0"}));
  server_->DeletePod("training", "far-ps-0");
  ASSERT_TRUE(WaitForNames({"far-worker-0"}));
  EXPECT_EQ(source_->stats().errors_total, 0u);
}

TEST_F(ApiServerSourceTest, NamespaceWatchUsesTheNamespacedCollection) {
  FakePod other;
  other.name = "x-ps-0";
  other.namespace_name = "research";
  other.node = "node-c";
  other.containers[0].id = std::string(64, 'd');
  server_->AddPod(other.Build());
  auto o = Options();
  o.node_name = "";
  o.namespace_name = "research";
  ASSERT_NO_FATAL_FAILURE(StartSource(o));
  ASSERT_TRUE(WaitForNames({"x-ps-0"}));
  EXPECT_EQ(server_->requests().at(0).path, "/api/v1/namespaces/research/pods");
  ASSERT_TRUE(server_->WaitForOpenWatches(1, 5s));
  server_->AddPod(Pod("ctr-worker-9", "node-c"));  // namespace training
  other.name = "x-worker-0";
  server_->AddPod(other.Build());
  ASSERT_TRUE(WaitForNames({"x-ps-0", "x-worker-0"}));
}

TEST_F(ApiServerSourceTest, ServerDownKeepsPodsAndRecovers) {
  ASSERT_NO_FATAL_FAILURE(StartAndSync());
  const auto before = Names();
  server_->Stop();
  ASSERT_TRUE(WaitUntil([&] { return source_->stats().errors_total >= 3; }));
  EXPECT_EQ(Names(), before);
  EXPECT_TRUE(logs.Contains("stream broken") ||
              logs.Contains("connection failed"))
      << logs.Dump();
  EXPECT_TRUE(logs.WaitFor("connection failed (refused or unreachable)"));
  EXPECT_TRUE(logs.Contains("keeping 2 known pods")) << logs.Dump();

  EXPECT_FALSE(logs.Contains("list works again"));
  server_->AddPod(Pod("ctr-worker-1"));  // changed while we were away
  std::string error;
  ASSERT_TRUE(server_->Restart(&error)) << error;
  ASSERT_TRUE(WaitForNames({"ctr-ps-0", "ctr-worker-0", "ctr-worker-1"}));
  ASSERT_TRUE(server_->WaitForOpenWatches(1, 5s));
  server_->AddPod(Pod("ctr-worker-2"));
  ASSERT_TRUE(WaitForNames(
      {"ctr-ps-0", "ctr-worker-0", "ctr-worker-1", "ctr-worker-2"}));
  EXPECT_TRUE(logs.Contains("list works again, 3 pods")) << logs.Dump();
}

TEST_F(ApiServerSourceTest, HttpsToAPlainServerFailsTheHandshake) {
  auto o = Options();
  o.api_url = "https://127.0.0.1:" + std::to_string(server_->port());
  ASSERT_NO_FATAL_FAILURE(StartSource(o));
  ASSERT_TRUE(WaitUntil([&] { return source_->stats().errors_total >= 1; }));
  EXPECT_TRUE(logs.WaitFor("list GET https://127.0.0.1:")) << logs.Dump();
  EXPECT_TRUE(logs.Contains("TLS")) << logs.Dump();
  EXPECT_FALSE(source_->stats().ready);
}

struct HttpErrorCase {
  int status;
  std::string reason;
};

class ApiServerHttpErrorTest
    : public ApiServerSourceTest,
      public ::testing::WithParamInterface<HttpErrorCase> {};

TEST_P(ApiServerHttpErrorTest, LogsKeepsPodsAndRecovers) {
  const auto& c = GetParam();
  ASSERT_NO_FATAL_FAILURE(StartAndSync());
  const std::string message = "injected " + c.reason + " for the test";
  // The renewed watch and the re-list after it both fail.
  server_->FailNext(
      c.status, FakeApiServer::StatusObject(c.status, c.reason, message).dump(),
      2);
  server_->EndWatches();
  // 30 s, not the default 5: the 65 MiB answer takes about 6 s under TSan.
  ASSERT_TRUE(
      WaitUntil([&] { return source_->stats().errors_total >= 2; }, 30s));
  EXPECT_EQ(Names(), (std::vector<std::string>{"ctr-ps-0", "ctr-worker-0"}));
  const std::string status_text = "HTTP " + std::to_string(c.status);
  EXPECT_TRUE(logs.WaitFor("watch GET " + server_->url()));
  EXPECT_TRUE(logs.WaitFor("list GET " + server_->url()));
  EXPECT_GE(logs.Count(status_text), 2u) << logs.Dump();
  EXPECT_TRUE(logs.Contains(message)) << logs.Dump();  // body excerpt

  // Recovery: the next list succeeds and the watch resumes.
  server_->AddPod(Pod("ctr-worker-1"));
  ASSERT_TRUE(WaitForNames({"ctr-ps-0", "ctr-worker-0", "ctr-worker-1"}));
  EXPECT_EQ(source_->stats().errors_total, 2u);
}

INSTANTIATE_TEST_SUITE_P(Statuses, ApiServerHttpErrorTest,
                         ::testing::Values(HttpErrorCase{401, "Unauthorized"},
                                           HttpErrorCase{403, "Forbidden"},
                                           HttpErrorCase{500, "InternalError"}),
                         [](const auto& param_info) {
                           return std::to_string(param_info.param.status);
                         });

// Hostile answers to the watch and to the re-list after it (one line each,
// so the watch parses it as an event): each is a clear, logged error, memory
// stays bounded (the line and page caps), the last known pods stay, and the
// next good answer is taken (issue: hostile input).
struct HostileCase {
  std::string name;
  std::function<std::string()> body;
  std::string logged;  // in the list's error
};

class ApiServerHostileTest : public ApiServerSourceTest,
                             public ::testing::WithParamInterface<HostileCase> {
};

TEST_P(ApiServerHostileTest, ErrorsKeepPodsAndRecover) {
  const auto& c = GetParam();
  ASSERT_NO_FATAL_FAILURE(StartAndSync());
  server_->FailNext(200, c.body(), 2);  // the renewed watch and the re-list
  server_->EndWatches();
  // 30 s, not the default 5: the 65 MiB answer takes about 6 s under TSan.
  ASSERT_TRUE(
      WaitUntil([&] { return source_->stats().errors_total >= 2; }, 30s));
  EXPECT_EQ(Names(), (std::vector<std::string>{"ctr-ps-0", "ctr-worker-0"}));
  EXPECT_TRUE(logs.WaitFor("list GET " + server_->url())) << logs.Dump();
  EXPECT_TRUE(logs.Contains(c.logged)) << logs.Dump();
  server_->AddPod(Pod("ctr-worker-1"));
  ASSERT_TRUE(WaitForNames({"ctr-ps-0", "ctr-worker-0", "ctr-worker-1"}));
}

std::string PodListWithName(const std::string& name) {
  return R"({"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[)"
         R"({"metadata":{"name":")" +
         name +
         R"(","namespace":"ml","uid":"u"},"spec":{"nodeName":"node-a"}}]})";
}

INSTANTIATE_TEST_SUITE_P(
    Bodies, ApiServerHostileTest,
    ::testing::Values(
        // 65 MiB of one pod list that never ends a line: over the 16 MiB
        // watch line and the 64 MiB list page.
        HostileCase{"oversized",
                    [] {
                      std::string body =
                          R"({"kind":"PodList","items":[{"metadata":{"name":")";
                      body.append(65u << 20, 'x');
                      return body;
                    },
                    "larger than 64 MiB"},
        // A million nested arrays: the parser must neither recurse nor
        // accept it.
        HostileCase{"deeply_nested",
                    [] {
                      return R"({"kind":"PodList","items":)" +
                             std::string(1'000'000, '[') + "\n";
                    },
                    "malformed JSON"},
        // A pod name that is not UTF-8 (Kubernetes only sends UTF-8).
        HostileCase{"invalid_utf8",
                    [] { return PodListWithName("ctr-\xff\xfe-0") + "\n"; },
                    "malformed JSON"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST_F(ApiServerSourceTest, MalformedListIsAnErrorThenRecovers) {
  server_->FailNext(200, "{\"kind\":\"PodList\",\"items\":[{");
  ASSERT_NO_FATAL_FAILURE(StartSource(Options()));
  ASSERT_TRUE(WaitUntil([&] { return source_->stats().ready; }));
  EXPECT_EQ(source_->stats().errors_total, 1u);
  EXPECT_TRUE(logs.Contains("malformed JSON")) << logs.Dump();
  EXPECT_TRUE(logs.Contains("body starts: {\"kind\":\"PodList\""))
      << logs.Dump();
  EXPECT_EQ(Names(), (std::vector<std::string>{"ctr-ps-0", "ctr-worker-0"}));
}

TEST_F(ApiServerSourceTest, MalformedWatchEventRelists) {
  ASSERT_NO_FATAL_FAILURE(StartAndSync());
  server_->SendRawWatchLine("{\"type\":\"ADDED\",\"object\":{garbage");
  ASSERT_TRUE(WaitUntil([&] { return source_->stats().errors_total == 1; }));
  EXPECT_TRUE(logs.WaitFor("malformed JSON"));
  EXPECT_TRUE(logs.Contains("line starts: {\"type\":\"ADDED\"")) << logs.Dump();
  EXPECT_EQ(Names(), (std::vector<std::string>{"ctr-ps-0", "ctr-worker-0"}));
  ASSERT_TRUE(WaitUntil([&] { return CountRequests(false) == 2; }));
  server_->AddPod(Pod("ctr-worker-1"));
  ASSERT_TRUE(WaitForNames({"ctr-ps-0", "ctr-worker-0", "ctr-worker-1"}));
}

TEST_F(ApiServerSourceTest, GoneRelistsWithoutCountingAnError) {
  ASSERT_NO_FATAL_FAILURE(StartAndSync());
  // Changes on another node move the server's version past ours unseen;
  // compaction then makes our version too old.
  server_->AddPod(Pod("far-ps-0", "node-b"));
  server_->AddPod(Pod("far-ps-1", "node-b"));
  server_->Compact();
  server_->EndWatches();
  ASSERT_TRUE(WaitUntil([&] { return CountRequests(false) == 2; }));
  EXPECT_TRUE(logs.WaitFor("410 Gone")) << logs.Dump();
  EXPECT_TRUE(logs.Contains("too old resource version")) << logs.Dump();
  EXPECT_EQ(source_->stats().errors_total, 0u);
  const std::string rv = std::to_string(server_->resource_version());
  ASSERT_TRUE(server_->WaitForRequests(
      [&](const std::vector<RecordedRequest>& r) {
        return r.back().params.count("watch") &&
               r.back().params.at("resourceVersion") == rv;
      },
      5s));
  server_->AddPod(Pod("ctr-worker-9"));
  ASSERT_TRUE(WaitForNames({"ctr-ps-0", "ctr-worker-0", "ctr-worker-9"}));
}

TEST_F(ApiServerSourceTest, BookmarkAdvancesTheResumeVersion) {
  ASSERT_NO_FATAL_FAILURE(StartAndSync());
  server_->AddPod(Pod("far-ps-0", "node-b"));  // unseen: version 5
  server_->SendBookmark();
  // The stream delivers the bookmark before it ends, so the renewed watch
  // must resume from the bookmark's version.
  const size_t watches = CountRequests(true);
  server_->EndWatches();
  ASSERT_TRUE(WaitUntil([&] { return CountRequests(true) == watches + 1; }));
  EXPECT_EQ(server_->requests().back().params.at("resourceVersion"), "5");
  EXPECT_EQ(CountRequests(false), 1u);
}

TEST_F(ApiServerSourceTest, TokenIsReReadSoRotationWorks) {
  ASSERT_NO_FATAL_FAILURE(StartAndSync());
  WriteToken("rotated-token");
  server_->SetRequiredToken("rotated-token");
  server_->EndWatches();
  ASSERT_TRUE(server_->WaitForRequests(
      [](const std::vector<RecordedRequest>& r) {
        return r.back().authorization == "Bearer rotated-token";
      },
      5s));
  server_->AddPod(Pod("ctr-worker-1"));
  ASSERT_TRUE(WaitForNames({"ctr-ps-0", "ctr-worker-0", "ctr-worker-1"}));
  EXPECT_EQ(source_->stats().errors_total, 0u);
}

TEST_F(ApiServerSourceTest, WrongTokenIsUnauthorized) {
  WriteToken("wrong");
  ASSERT_NO_FATAL_FAILURE(StartSource(Options()));
  ASSERT_TRUE(WaitUntil([&] { return source_->stats().errors_total >= 2; }));
  EXPECT_FALSE(source_->stats().ready);
  EXPECT_TRUE(table_.Get()->empty());
  EXPECT_TRUE(logs.Contains("HTTP 401")) << logs.Dump();
}

TEST_F(ApiServerSourceTest, StartErrors) {
  struct Case {
    std::string what;
    std::function<void(ApiServerSourceOptions&)> change;
    std::string want;
  } cases[] = {
      {"missing token file",
       [&](auto& o) { o.token_file = (dir_ / "nope").string(); },
       "kube token file " + (dir_ / "nope").string() + ": cannot be read"},
      {"empty token file",
       [&](auto& o) {
         std::ofstream(dir_ / "empty");
         o.token_file = (dir_ / "empty").string();
       },
       "empty"},
      {"bad URL", [](auto& o) { o.api_url = "localhost:6443"; },
       "kube API URL \"localhost:6443\""},
      {"missing CA file",
       [&](auto& o) {
         o.api_url = "https://127.0.0.1:1";
         o.ca_file = (dir_ / "ca.crt").string();
       },
       "kube CA file"},
      {"bad backoff", [](auto& o) { o.backoff_max = 1ms; }, "backoff"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto o = Options();
    c.change(o);
    ApiServerSource source(o, table_);
    Status st = source.Start();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(c.want), std::string::npos) << st.message();
  }
}

TEST_F(ApiServerSourceTest, StopIsPromptWhileAWatchIsOpen) {
  ASSERT_NO_FATAL_FAILURE(StartAndSync());
  ASSERT_EQ(server_->open_watches(), 1u);
  const auto t0 = std::chrono::steady_clock::now();
  source_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_EQ(source_->stats().errors_total, 0u);
}

TEST_F(ApiServerSourceTest, StopIsPromptDuringBackoff) {
  server_->Stop();
  auto o = Options();
  o.backoff_initial = std::chrono::hours(1);
  o.backoff_max = std::chrono::hours(1);
  ASSERT_NO_FATAL_FAILURE(StartSource(o));
  ASSERT_TRUE(WaitUntil([&] { return source_->stats().errors_total == 1; }));
  const auto t0 = std::chrono::steady_clock::now();
  source_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

TEST_F(ApiServerSourceTest, StopIsPromptWhileTheServerNeverAnswers) {
  // A listener that accepts but never responds: the list itself blocks.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  auto o = Options();
  o.api_url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  ASSERT_NO_FATAL_FAILURE(StartSource(o));
  // Accept the list's connection, then never answer it.
  pollfd pfd{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 5000), 1);
  int conn = ::accept(fd, nullptr, nullptr);
  ASSERT_GE(conn, 0);
  const auto t0 = std::chrono::steady_clock::now();
  source_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  ::close(conn);
  ::close(fd);
}

}  // namespace
}  // namespace trainscope
