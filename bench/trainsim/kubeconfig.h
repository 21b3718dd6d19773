#pragma once

#include <string>

namespace trainsim {

// What trainsim needs from a kubeconfig (`--kubeconfig FILE`): the API
// server of the current context and a bearer token. Client certificates,
// exec and auth-provider plugins, basic auth, proxies and skipping TLS
// verification are refused with a message naming the field.
struct KubeConfig {
  std::string server;   // "https://127.0.0.1:6443"
  std::string ca_file;  // certificate-authority, absolute ("" = none)
  std::string ca_pem;   // certificate-authority-data, decoded ("" = none)
  std::string token;    // token, or the contents of tokenFile
};

// Parses kubeconfig text. Relative paths (certificate-authority, tokenFile)
// resolve against `base_dir`, as kubectl resolves them against the file's
// directory. Throws std::runtime_error naming the field on anything
// missing or unsupported.
KubeConfig ParseKubeConfig(const std::string& text,
                           const std::string& base_dir);
// Reads and parses a kubeconfig file.
KubeConfig LoadKubeConfig(const std::string& path);

}  // namespace trainsim
