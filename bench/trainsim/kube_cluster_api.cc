#include "kube_cluster_api.h"

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "kube/kubeconfig.h"
#include "kube_objects.h"

namespace trainsim {
namespace {

using nlohmann::json;

constexpr const char* kMergePatch = "application/merge-patch+json";
constexpr const char* kStrategicPatch =
    "application/strategic-merge-patch+json";
constexpr const char* kJson = "application/json";

std::string Rfc3339Now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Writes a file only its owner reads (a token, a CA).
void WritePrivateFile(const std::string& path, const std::string& text) {
  {
    std::ofstream out(path, std::ios::trunc);
    if (!(out << text)) throw std::runtime_error("cannot write " + path);
  }
  chmod(path.c_str(), 0600);
}

// A Kubernetes Status message, or the start of whatever else came back.
std::string Reason(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string())
    return j["message"].get<std::string>();
  return body.substr(0, 200);
}

// Bearer-token HTTP(S) to one API server, every answer checked.
class KubeHttp {
 public:
  KubeHttp(const std::string& server, const std::string& ca_file,
           const std::string& token) {
    const size_t scheme_end = server.find("://") + 3;
    const size_t slash = server.find('/', scheme_end);
    origin_ = server.substr(0, slash);
    if (slash != std::string::npos) prefix_ = server.substr(slash);
    while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
    client_ = std::make_unique<httplib::Client>(origin_);
    client_->set_connection_timeout(std::chrono::seconds(5));
    client_->set_read_timeout(std::chrono::seconds(20));
    client_->set_bearer_token_auth(token);
    if (origin_.rfind("https://", 0) == 0) {
      client_->enable_server_certificate_verification(true);
      if (!ca_file.empty()) client_->set_ca_cert_path(ca_file);
    }
  }

  // The answer's body as JSON when its status is 2xx or in `also_ok`;
  // throws otherwise. `status` receives the HTTP status.
  json Call(const std::string& method, const std::string& path,
            const json* body = nullptr, const char* content_type = kJson,
            std::set<int> also_ok = {}, int* status = nullptr) {
    const std::string full = prefix_ + path;
    const std::string text = body ? body->dump() : "";
    httplib::Result r = Send(method, full, text, content_type);
    const std::string what = method + " " + origin_ + full;
    if (!r)
      throw std::runtime_error(what + ": " + httplib::to_string(r.error()));
    if (status) *status = r->status;
    if ((r->status < 200 || r->status > 299) && !also_ok.count(r->status))
      throw std::runtime_error(what + ": HTTP " + std::to_string(r->status) +
                               ": " + Reason(r->body));
    return json::parse(r->body, nullptr, false);
  }

 private:
  httplib::Result Send(const std::string& method, const std::string& path,
                       const std::string& body, const char* content_type) {
    if (method == "GET") return client_->Get(path);
    if (method == "POST") return client_->Post(path, body, content_type);
    if (method == "PUT") return client_->Put(path, body, content_type);
    if (method == "PATCH") return client_->Patch(path, body, content_type);
    return client_->Delete(path, body, content_type);
  }

  std::string origin_, prefix_;
  std::unique_ptr<httplib::Client> client_;
};

std::string PodPath(const std::string& ns, const std::string& name) {
  return "/api/v1/namespaces/" + ns + "/pods/" + name;
}

// A real API server, written as the kubelet (and, for namespaces, an
// administrator) would. Remembers what it made, to delete exactly that.
class KubeClusterApi final : public ClusterApi {
 public:
  explicit KubeClusterApi(const KubeClusterApiOptions& o) {
    trainscope::kube::KubeConfig config =
        trainscope::kube::LoadKubeConfig(o.kubeconfig);
    trainscope::kube::RunCredentialPlugin(&config);
    // trainsim writes as the kubelet would and hands a token to the agents:
    // it needs a bearer token, where kubectl could use a certificate.
    if (config.token.empty())
      throw std::runtime_error(
          "kubeconfig: trainsim needs a bearer token (token, tokenFile or an "
          "exec plugin that gives one), not a client certificate");
    access_.url = config.server;
    access_.ca_file = config.ca_file;
    if (!config.ca_pem.empty()) {
      access_.ca_file = o.files_dir + "/kube-ca.crt";
      WritePrivateFile(access_.ca_file, config.ca_pem);
    }
    http_ = std::make_unique<KubeHttp>(config.server, access_.ca_file,
                                       config.token);
    const json version = http_->Call("GET", "/version");
    spdlog::info("[trainsim] Kubernetes API {} ({}), as the kubelet",
                 config.server, version.value("gitVersion", "?"));
    access_.token_file = o.files_dir + "/agent.token";
    WritePrivateFile(access_.token_file, AgentToken(o, config.token) + "\n");
  }
  ~KubeClusterApi() override { DeleteAll(); }
  KubeClusterApi(const KubeClusterApi&) = delete;
  KubeClusterApi& operator=(const KubeClusterApi&) = delete;

  void CreateNodes(const Layout& layout) override {
    const std::string now = Rfc3339Now();
    for (size_t k = 0; k < layout.nodes.size(); ++k) {
      const int i = static_cast<int>(k);
      const json body = NodeCreateBody(layout, i);
      http_->Call("POST", "/api/v1/nodes", &body);
      nodes_.push_back(layout.nodes[k].name);
      const json status = NodeStatusPatch(layout, i, now);
      http_->Call("PATCH", "/api/v1/nodes/" + layout.nodes[k].name + "/status",
                  &status, kMergePatch);
    }
  }

  std::string CreatePod(const json& pod) override {
    const std::string ns = pod["metadata"]["namespace"];
    const std::string name = pod["metadata"]["name"];
    EnsureNamespace(ns);
    const json body = PodCreateBody(pod);
    const json created =
        http_->Call("POST", "/api/v1/namespaces/" + ns + "/pods", &body);
    pods_[ns + "/" + name] = pod;
    const json status = PodStatusPatch(pod);
    http_->Call("PATCH", PodPath(ns, name) + "/status", &status, kMergePatch);
    return created.at("metadata").at("uid").get<std::string>();
  }

  void UpdatePod(const json& pod) override {
    const std::string ns = pod["metadata"]["namespace"];
    const std::string name = pod["metadata"]["name"];
    auto it = pods_.find(ns + "/" + name);
    if (it == pods_.end())
      throw std::runtime_error("no pod " + ns + "/" + name);
    if (auto patch = PodMetadataPatch(it->second, pod))
      http_->Call("PATCH", PodPath(ns, name), &*patch, kMergePatch);
    if (auto patch = PodResizePatch(it->second, pod))
      http_->Call("PATCH", PodPath(ns, name) + "/resize", &*patch,
                  kStrategicPatch);
    if (pod["status"] != it->second["status"]) {
      const json status = PodStatusPatch(pod);
      http_->Call("PATCH", PodPath(ns, name) + "/status", &status, kMergePatch);
    }
    it->second = pod;
  }

  void DeleteAll() noexcept override {
    // The kubelet's final delete (grace 0: the containers are gone).
    for (const auto& [key, pod] : pods_)
      Delete(PodPath(pod["metadata"]["namespace"], pod["metadata"]["name"]) +
             "?gracePeriodSeconds=0");
    pods_.clear();
    for (const std::string& node : nodes_) Delete("/api/v1/nodes/" + node);
    nodes_.clear();
    for (const std::string& ns : namespaces_) DeleteNamespace(ns);
    namespaces_.clear();
  }

  AgentApiAccess agent_access() const override { return access_; }
  bool assigns_uids() const override { return true; }

 private:
  // The agents' token: the ServiceAccount's, from the TokenRequest API, as
  // the kubelet mounts it into the DaemonSet's pods.
  std::string AgentToken(const KubeClusterApiOptions& o,
                         const std::string& own) {
    if (o.agent_service_account.empty()) {
      spdlog::warn(
          "[trainsim] the agents use the kubeconfig's own token "
          "(--agent-service-account \"\"), not a ServiceAccount's");
      return own;
    }
    const size_t slash = o.agent_service_account.find('/');
    if (slash == std::string::npos)
      throw std::runtime_error("--agent-service-account must be NS/NAME, got " +
                               o.agent_service_account);
    const std::string ns = o.agent_service_account.substr(0, slash);
    const std::string sa = o.agent_service_account.substr(slash + 1);
    const json body = TokenRequestBody(o.token_seconds);
    int status = 0;
    const json answer = http_->Call(
        "POST",
        "/api/v1/namespaces/" + ns + "/serviceaccounts/" + sa + "/token", &body,
        kJson, {404}, &status);
    if (status == 404)
      throw std::runtime_error(
          "ServiceAccount " + o.agent_service_account +
          " not found: apply the shipped RBAC first (kubectl kustomize "
          "daemonset/ | kubectl apply -f -), or pass "
          "--agent-service-account \"\" to give the agents the "
          "kubeconfig's own token");
    spdlog::info("[trainsim] agents use a token of ServiceAccount {}",
                 o.agent_service_account);
    return answer.at("status").at("token").get<std::string>();
  }

  void EnsureNamespace(const std::string& ns) {
    if (known_namespaces_.count(ns)) return;
    int status = 0;
    http_->Call("GET", "/api/v1/namespaces/" + ns, nullptr, kJson, {404},
                &status);
    if (status == 404) {
      const json body = {{"apiVersion", "v1"},
                         {"kind", "Namespace"},
                         {"metadata", {{"name", ns}}}};
      http_->Call("POST", "/api/v1/namespaces", &body);
      namespaces_.push_back(ns);
    }
    known_namespaces_.insert(ns);
  }

  void Delete(const std::string& path) noexcept {
    try {
      http_->Call("DELETE", path, nullptr, kJson, {404});
    } catch (const std::exception& e) {
      spdlog::warn("[trainsim] cleaning the API server: {}", e.what());
    }
  }

  // A namespace's deletion waits for the namespace controller to empty it
  // and drop its `kubernetes` finalizer; a bare API server runs none. It
  // holds nothing of ours any more (its pods are deleted), so finalize it
  // here, or the next run could not create it again.
  void DeleteNamespace(const std::string& ns) noexcept {
    try {
      const std::string path = "/api/v1/namespaces/" + ns;
      http_->Call("DELETE", path, nullptr, kJson, {404});
      int status = 0;
      json object = http_->Call("GET", path, nullptr, kJson, {404}, &status);
      if (status == 404) return;
      object["spec"]["finalizers"] = json::array();
      http_->Call("PUT", path + "/finalize", &object, kJson, {404});
    } catch (const std::exception& e) {
      spdlog::warn("[trainsim] deleting namespace {}: {}", ns, e.what());
    }
  }

  AgentApiAccess access_;
  std::unique_ptr<KubeHttp> http_;
  std::vector<std::string> nodes_;
  std::map<std::string, json> pods_;     // by namespace/name: the last sent
  std::vector<std::string> namespaces_;  // created here
  std::set<std::string> known_namespaces_;
};

}  // namespace

std::unique_ptr<ClusterApi> ConnectKubeClusterApi(
    const KubeClusterApiOptions& options) {
  return std::make_unique<KubeClusterApi>(options);
}

}  // namespace trainsim
