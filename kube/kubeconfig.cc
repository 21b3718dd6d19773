#include "kube/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "trainscope/base64.h"

namespace trainscope::kube {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void Fail(const std::string& field, const std::string& why) {
  throw std::runtime_error("kubeconfig: " + field + ": " + why);
}

bool Absent(const YAML::Node& node) {
  return !node.IsDefined() || node.IsNull();
}

std::string Scalar(const YAML::Node& node, const std::string& field) {
  if (Absent(node)) return "";
  if (!node.IsScalar()) Fail(field, "expected a string");
  return node.as<std::string>();
}

// The entry of a named list (clusters, users, contexts) called `name`; its
// `inner` map (cluster, user, context).
YAML::Node Named(const YAML::Node& root, const std::string& list,
                 const std::string& inner, const std::string& name) {
  const YAML::Node entries = root[list];
  if (!Absent(entries) && !entries.IsSequence()) Fail(list, "expected a list");
  if (!Absent(entries)) {
    for (const YAML::Node& e : entries) {
      if (Scalar(e["name"], list + "[].name") != name) continue;
      const YAML::Node body = e[inner];
      if (Absent(body) || !body.IsMap())
        Fail(list + "[" + name + "]." + inner, "expected a map");
      return body;
    }
  }
  Fail(list, "no entry named \"" + name + "\"");
}

std::string Resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

std::string ReadFile(const std::string& path, const std::string& field) {
  std::ifstream in(path);
  if (!in) Fail(field, path + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start])))
    ++start;
  return s.substr(start);
}

// Standard padded base64, as kubectl reads it; line breaks and spaces
// are skipped.
std::string DecodeBase64Field(const std::string& field, std::string text) {
  std::erase_if(
      text, [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  std::string out;
  if (!trainscope::DecodeBase64(text, &out) || out.empty())
    Fail(field, "not base64");
  return out;
}

// Fields kubectl understands that are not supported: each refused by name
// rather than silently ignored (a request would then fail later, less
// clearly).
void RefuseUnsupported(const YAML::Node& map, const std::string& where,
                       std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (!Absent(map[key]))
      Fail(where + "." + key,
           "not supported (use a token, a client certificate or an exec "
           "credential plugin, and a CA)");
}

void ReadCluster(const YAML::Node& cluster, const std::string& where,
                 const std::string& base_dir, KubeConfig* out) {
  RefuseUnsupported(cluster, where,
                    {"insecure-skip-tls-verify", "proxy-url", "tls-server-name",
                     "disable-compression"});
  out->server = Scalar(cluster["server"], where + ".server");
  if (out->server.empty()) Fail(where + ".server", "missing");
  if (out->server.rfind("https://", 0) != 0 &&
      out->server.rfind("http://", 0) != 0)
    Fail(where + ".server", "\"" + out->server + "\" is not an http(s) URL");
  out->ca_file = Resolve(Scalar(cluster["certificate-authority"],
                                where + ".certificate-authority"),
                         base_dir);
  const std::string data = Scalar(cluster["certificate-authority-data"],
                                  where + ".certificate-authority-data");
  if (!data.empty())
    out->ca_pem =
        DecodeBase64Field(where + ".certificate-authority-data", data);
  if (!out->ca_file.empty() && !out->ca_pem.empty())
    Fail(where, "both certificate-authority and certificate-authority-data");
  if (!out->ca_file.empty())
    ReadFile(out->ca_file, where + ".certificate-authority");
}

// certificate-x or certificate-x-data (PEM either way), not both.
std::string PemField(const YAML::Node& map, const std::string& where,
                     const std::string& key, const std::string& base_dir) {
  const std::string file =
      Resolve(Scalar(map[key], where + "." + key), base_dir);
  const std::string data =
      Scalar(map[key + "-data"], where + "." + key + "-data");
  if (!file.empty() && !data.empty())
    Fail(where, "both " + key + " and " + key + "-data");
  if (!data.empty())
    return DecodeBase64Field(where + "." + key + "-data", data);
  if (!file.empty()) return ReadFile(file, where + "." + key);
  return "";
}

ExecPlugin ReadExec(const YAML::Node& exec, const std::string& where,
                    const std::string& base_dir) {
  if (!exec.IsMap()) Fail(where, "expected a map");
  ExecPlugin out;
  out.api_version = Scalar(exec["apiVersion"], where + ".apiVersion");
  if (out.api_version != "client.authentication.k8s.io/v1" &&
      out.api_version != "client.authentication.k8s.io/v1beta1")
    Fail(where + ".apiVersion",
         "\"" + out.api_version +
             "\" (client.authentication.k8s.io/v1 or v1beta1 expected)");
  out.command = Scalar(exec["command"], where + ".command");
  if (out.command.empty()) Fail(where + ".command", "missing");
  // kubectl: a command with a path separator is relative to the file;
  // a bare name is looked up on PATH.
  if (out.command.find('/') != std::string::npos)
    out.command = Resolve(out.command, base_dir);
  const YAML::Node args = exec["args"];
  if (!Absent(args)) {
    if (!args.IsSequence()) Fail(where + ".args", "expected a list");
    for (const YAML::Node& a : args)
      out.args.push_back(Scalar(a, where + ".args[]"));
  }
  const YAML::Node env = exec["env"];
  if (!Absent(env)) {
    if (!env.IsSequence()) Fail(where + ".env", "expected a list");
    for (const YAML::Node& e : env) {
      const std::string name = Scalar(e["name"], where + ".env[].name");
      if (name.empty()) Fail(where + ".env[].name", "missing");
      out.env[name] = Scalar(e["value"], where + ".env[].value");
    }
  }
  return out;
}

void ReadUser(const YAML::Node& user, const std::string& where,
              const std::string& base_dir, KubeConfig* out) {
  RefuseUnsupported(user, where,
                    {"username", "password", "auth-provider", "as", "as-groups",
                     "as-user-extra"});
  out->token = Scalar(user["token"], where + ".token");
  const std::string file =
      Resolve(Scalar(user["tokenFile"], where + ".tokenFile"), base_dir);
  if (!out->token.empty() && !file.empty())
    Fail(where, "both token and tokenFile");
  if (!file.empty()) out->token = ReadFile(file, where + ".tokenFile");
  out->token = Trim(out->token);
  out->client_cert_pem = PemField(user, where, "client-certificate", base_dir);
  out->client_key_pem = PemField(user, where, "client-key", base_dir);
  if (out->client_cert_pem.empty() != out->client_key_pem.empty())
    Fail(where,
         "a client certificate needs its key, and a key its certificate");
  if (!Absent(user["exec"])) {
    out->exec = ReadExec(user["exec"], where + ".exec", base_dir);
    out->has_exec = true;
  }
  if (out->token.empty() && out->client_cert_pem.empty() && !out->has_exec)
    Fail(where,
         "no credentials (token, tokenFile, client-certificate and "
         "client-key, or exec)");
}

}  // namespace

KubeConfig ParseKubeConfig(const std::string& text,
                           const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    Fail("YAML", e.what());
  }
  if (!root.IsMap()) Fail("document", "expected a map");
  const std::string current =
      Scalar(root["current-context"], "current-context");
  if (current.empty()) Fail("current-context", "missing");
  const YAML::Node context = Named(root, "contexts", "context", current);
  const std::string cluster_name =
      Scalar(context["cluster"], "contexts[" + current + "].context.cluster");
  const std::string user_name =
      Scalar(context["user"], "contexts[" + current + "].context.user");
  if (cluster_name.empty())
    Fail("contexts[" + current + "].context.cluster", "missing");
  if (user_name.empty())
    Fail("contexts[" + current + "].context.user", "missing");

  KubeConfig out;
  ReadCluster(Named(root, "clusters", "cluster", cluster_name),
              "clusters[" + cluster_name + "].cluster", base_dir, &out);
  ReadUser(Named(root, "users", "user", user_name),
           "users[" + user_name + "].user", base_dir, &out);
  return out;
}

KubeConfig LoadKubeConfig(const std::string& path) {
  const std::string dir = fs::absolute(path).parent_path().string();
  return ParseKubeConfig(ReadFile(path, "file"), dir);
}

}  // namespace trainscope::kube
