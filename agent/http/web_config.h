#pragma once

#include <map>
#include <string>
#include <vector>

#include "trainscope/status.h"

namespace trainscope {

// How the HTTP server checks client certificates (names as in Go's
// crypto/tls and Prometheus's exporter-toolkit).
enum class ClientAuth {
  kNone,           // NoClientCert
  kVerifyIfGiven,  // VerifyClientCertIfGiven
  kRequireVerify,  // RequireAndVerifyClientCert
};

// tls_server_config, with the files already read (PEM).
struct WebTlsConfig {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;
  ClientAuth client_auth = ClientAuth::kNone;
  std::string min_version = "TLS12";
  std::string cert_pem;
  std::string key_pem;
  std::string client_ca_pem;
};

// --web-config-file: the format of Prometheus's exporter-toolkit web config
// (tls_server_config, basic_auth_users), plus one Trainscope extension,
// `authorization: {type: Bearer, credentials_file: PATH}` (docs/reliability.md,
// "Security"). Everything is read once at start-up.
struct WebConfig {
  bool tls_enabled = false;
  WebTlsConfig tls;
  std::map<std::string, std::string> basic_auth_users;  // user -> bcrypt hash
  std::string bearer_token_file;
  std::vector<std::string> bearer_tokens;

  bool auth_enabled() const {
    return !basic_auth_users.empty() || !bearer_tokens.empty();
  }
};

// Parses the YAML text of a web config; relative file names are resolved
// against `base_dir` (the config file's directory, as exporter-toolkit
// does) and read. Errors name the offending field.
Status ParseWebConfig(const std::string& yaml, const std::string& base_dir,
                      WebConfig* out);

// Reads and parses the file at `path`.
Status LoadWebConfig(const std::string& path, WebConfig* out);

}  // namespace trainscope
