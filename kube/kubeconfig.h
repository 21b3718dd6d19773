#pragma once

#include <map>
#include <string>
#include <vector>

namespace trainscope::kube {

// A credential plugin (users[].user.exec): kubectl's ExecCredential
// protocol, client.authentication.k8s.io/v1 or v1beta1. How EKS, GKE and
// AKS clusters hand out tokens.
struct ExecPlugin {
  std::string api_version;  // client.authentication.k8s.io/v1[beta1]
  std::string command;      // as given, or resolved against the file's dir
  std::vector<std::string> args;
  std::map<std::string, std::string> env;  // added to the caller's
};

// How to reach the API server of a kubeconfig's current context, as kubectl
// would: the server, the CA that signs it, and one way to authenticate (a
// bearer token, a client certificate, or a credential plugin still to be
// run). Fields kubectl knows that are not supported here (basic auth,
// auth-provider, impersonation, proxies, skipping TLS verification) are
// refused with a message naming the field.
struct KubeConfig {
  std::string server;           // "https://127.0.0.1:6443"
  std::string ca_file;          // certificate-authority, absolute ("" = none)
  std::string ca_pem;           // certificate-authority-data, decoded
  std::string token;            // token, or the contents of tokenFile
  std::string client_cert_pem;  // client-certificate(-data), PEM
  std::string client_key_pem;   // client-key(-data), PEM
  bool has_exec = false;        // `exec` below is to be run for the token
  ExecPlugin exec;
};

// Parses kubeconfig text. Relative paths (certificate-authority, tokenFile,
// client-certificate, client-key, an exec command with a slash) resolve
// against `base_dir`, as kubectl resolves them against the file's
// directory. Throws std::runtime_error naming the field on anything
// missing or unsupported.
KubeConfig ParseKubeConfig(const std::string& text,
                           const std::string& base_dir);
// Reads and parses a kubeconfig file (nothing run yet).
KubeConfig LoadKubeConfig(const std::string& path);

// Runs the credential plugin, if any, and stores what it printed (a token,
// or a client certificate and key) in `config`. Throws std::runtime_error
// naming the command and what went wrong (not found, exit status, timed
// out after `timeout_seconds`, not an ExecCredential).
void RunCredentialPlugin(KubeConfig* config, double timeout_seconds = 30);

// The credentials of an ExecCredential document (the plugin's stdout);
// pure, for tests. Throws std::runtime_error on anything else.
void ReadExecCredential(const std::string& json_text, KubeConfig* config);

}  // namespace trainscope::kube
