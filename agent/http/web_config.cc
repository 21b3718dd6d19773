#include "http/web_config.h"

#include <gnutls/gnutls.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <memory>
#include <sstream>

#include "trainscope/file_util.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;

// A web config is a few hundred bytes, a PEM chain or a token list a few
// kilobytes: these caps only stop a wrong path (a log, a disk image) from
// being read into memory.
constexpr size_t kMaxWebConfigBytes = 1 << 20;
constexpr size_t kMaxNamedFileBytes = 4 << 20;

// exporter-toolkit fields this agent does not implement: refused by name
// rather than silently ignored, so nobody believes a setting is in force.
constexpr const char* kUnsupportedTls[] = {"cert",
                                           "key",
                                           "client_ca",
                                           "max_version",
                                           "cipher_suites",
                                           "curve_preferences",
                                           "client_allowed_sans",
                                           "prefer_server_cipher_suites"};

Status FieldError(const std::string& field, const std::string& why) {
  return Status::Error(field + ": " + why);
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// Reads a file the config names; `field` goes into the error.
Status ReadNamedFile(const std::string& field, const std::string& base_dir,
                     std::string* name, std::string* contents) {
  fs::path path(*name);
  if (path.is_relative() && !base_dir.empty()) path = fs::path(base_dir) / path;
  *name = path.string();
  if (Status s = ReadConfigFile(path, kMaxNamedFileBytes, contents); !s.ok()) {
    return FieldError(field, s.message());
  }
  if (contents->empty()) return FieldError(field, *name + ": empty file");
  return Status::Ok();
}

// A key that is not there (yaml-cpp's undefined node) or written empty.
bool Absent(const YAML::Node& node) {
  return !node.IsDefined() || node.IsNull();
}

// A scalar string, or an error naming the field.
Status ScalarString(const YAML::Node& node, const std::string& field,
                    std::string* out) {
  if (Absent(node)) {
    out->clear();
    return Status::Ok();
  }
  if (!node.IsScalar()) return FieldError(field, "expected a string");
  *out = node.as<std::string>();
  return Status::Ok();
}

// Keys of a mapping, refusing any not in `known`.
Status CheckKeys(const YAML::Node& map, const std::string& where,
                 const std::vector<std::string>& known) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    for (const char* unsupported : kUnsupportedTls) {
      if (where == "tls_server_config" && key == unsupported) {
        return FieldError(where + "." + key,
                          "not supported by trainscope-agent (supported: " +
                              Join(known) + ")");
      }
    }
    return FieldError(where.empty() ? key : where + "." + key,
                      "unknown field (known: " + Join(known) + ")");
  }
  return Status::Ok();
}

Status ParseClientAuth(const std::string& value, ClientAuth* out) {
  if (value.empty() || value == "NoClientCert") {
    *out = ClientAuth::kNone;
  } else if (value == "VerifyClientCertIfGiven") {
    *out = ClientAuth::kVerifyIfGiven;
  } else if (value == "RequireAndVerifyClientCert") {
    *out = ClientAuth::kRequireVerify;
  } else if (value == "RequestClientCert" || value == "RequireAnyClientCert") {
    return FieldError("tls_server_config.client_auth_type",
                      value +
                          " (unverified client certificates) is not "
                          "supported; use VerifyClientCertIfGiven or "
                          "RequireAndVerifyClientCert");
  } else {
    return FieldError(
        "tls_server_config.client_auth_type",
        "\"" + value +
            "\" is not one of NoClientCert, "
            "VerifyClientCertIfGiven, RequireAndVerifyClientCert");
  }
  return Status::Ok();
}

// Loads the PEM files through GnuTLS (the library the HTTP server uses), so
// a bad certificate, a key that does not match it or an empty CA bundle is
// a start-up error naming the file, not a failed handshake later.
Status CheckTlsMaterial(const WebTlsConfig& tls) {
  gnutls_certificate_credentials_t raw = nullptr;
  if (gnutls_certificate_allocate_credentials(&raw) < 0) {
    return Status::Error("tls_server_config: cannot allocate credentials");
  }
  std::unique_ptr<gnutls_certificate_credentials_st,
                  decltype(&gnutls_certificate_free_credentials)>
      creds(raw, &gnutls_certificate_free_credentials);
  auto datum = [](const std::string& s) {
    return gnutls_datum_t{
        reinterpret_cast<unsigned char*>(const_cast<char*>(s.data())),
        static_cast<unsigned>(s.size())};
  };
  const gnutls_datum_t cert = datum(tls.cert_pem), key = datum(tls.key_pem);
  if (int rc = gnutls_certificate_set_x509_key_mem(creds.get(), &cert, &key,
                                                   GNUTLS_X509_FMT_PEM);
      rc < 0) {
    return Status::Error("tls_server_config.cert_file " + tls.cert_file +
                         " / key_file " + tls.key_file + ": " +
                         gnutls_strerror(rc));
  }
  if (!tls.client_ca_pem.empty()) {
    const gnutls_datum_t ca = datum(tls.client_ca_pem);
    int rc = gnutls_certificate_set_x509_trust_mem(creds.get(), &ca,
                                                   GNUTLS_X509_FMT_PEM);
    if (rc <= 0) {
      return FieldError("tls_server_config.client_ca_file",
                        tls.client_ca_file + ": " +
                            (rc < 0 ? std::string(gnutls_strerror(rc))
                                    : std::string("no PEM certificate")));
    }
  }
  return Status::Ok();
}

Status ParseTls(const YAML::Node& node, const std::string& base_dir,
                WebConfig* out) {
  if (Absent(node)) return Status::Ok();
  if (!node.IsMap()) return FieldError("tls_server_config", "expected a map");
  if (Status s = CheckKeys(node, "tls_server_config",
                           {"cert_file", "key_file", "client_ca_file",
                            "client_auth_type", "min_version"});
      !s.ok()) {
    return s;
  }
  WebTlsConfig& tls = out->tls;
  std::string auth_type;
  for (auto [key, target] : {std::pair{"cert_file", &tls.cert_file},
                             {"key_file", &tls.key_file},
                             {"client_ca_file", &tls.client_ca_file},
                             {"client_auth_type", &auth_type},
                             {"min_version", &tls.min_version}}) {
    if (Status s = ScalarString(
            node[key], std::string("tls_server_config.") + key, target);
        !s.ok()) {
      return s;
    }
  }
  if (tls.min_version.empty()) tls.min_version = "TLS12";
  if (tls.min_version != "TLS12" && tls.min_version != "TLS13") {
    return FieldError("tls_server_config.min_version",
                      "\"" + tls.min_version + "\" is not TLS12 or TLS13");
  }
  if (Status s = ParseClientAuth(auth_type, &tls.client_auth); !s.ok()) {
    return s;
  }
  // As exporter-toolkit: no certificate and no key means plain HTTP.
  if (tls.cert_file.empty() && tls.key_file.empty()) {
    if (!tls.client_ca_file.empty() || tls.client_auth != ClientAuth::kNone) {
      return FieldError("tls_server_config",
                        "client certificates need cert_file and key_file");
    }
    return Status::Ok();
  }
  if (tls.cert_file.empty()) {
    return FieldError("tls_server_config.cert_file",
                      "missing (key_file is set)");
  }
  if (tls.key_file.empty()) {
    return FieldError("tls_server_config.key_file",
                      "missing (cert_file is set)");
  }
  if (tls.client_auth != ClientAuth::kNone && tls.client_ca_file.empty()) {
    return FieldError("tls_server_config.client_ca_file",
                      "missing (client_auth_type " + auth_type +
                          " needs the CA that signs client certificates)");
  }
  if (tls.client_auth == ClientAuth::kNone && !tls.client_ca_file.empty()) {
    return FieldError("tls_server_config.client_auth_type",
                      "client_ca_file is set but client_auth_type is "
                      "NoClientCert; set VerifyClientCertIfGiven or "
                      "RequireAndVerifyClientCert");
  }
  if (Status s = ReadNamedFile("tls_server_config.cert_file", base_dir,
                               &tls.cert_file, &tls.cert_pem);
      !s.ok()) {
    return s;
  }
  if (Status s = ReadNamedFile("tls_server_config.key_file", base_dir,
                               &tls.key_file, &tls.key_pem);
      !s.ok()) {
    return s;
  }
  if (!tls.client_ca_file.empty()) {
    if (Status s = ReadNamedFile("tls_server_config.client_ca_file", base_dir,
                                 &tls.client_ca_file, &tls.client_ca_pem);
        !s.ok()) {
      return s;
    }
  }
  if (Status s = CheckTlsMaterial(tls); !s.ok()) return s;
  out->tls_enabled = true;
  return Status::Ok();
}

// bcrypt as crypt(3) writes it: $2a$, $2b$ or $2y$, cost, 53 characters.
bool LooksLikeBcrypt(const std::string& hash) {
  return hash.size() == 60 &&
         (hash.starts_with("$2a$") || hash.starts_with("$2b$") ||
          hash.starts_with("$2y$")) &&
         hash[6] == '$';
}

Status ParseUsers(const YAML::Node& node, WebConfig* out) {
  if (Absent(node)) return Status::Ok();
  if (!node.IsMap()) {
    return FieldError("basic_auth_users",
                      "expected a map of user: bcrypt hash");
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string user = it->first.as<std::string>();
    const std::string field = "basic_auth_users." + user;
    if (user.empty() || user.find(':') != std::string::npos ||
        user.find('\0') != std::string::npos) {
      return FieldError(field,
                        "a user name must be non-empty without ':' or NUL");
    }
    // YAML keeps both of two equal keys: which hash would win is an
    // accident of the parser, so say so instead of picking one.
    if (out->basic_auth_users.count(user)) {
      return FieldError(field, "listed twice");
    }
    std::string hash;
    if (Status s = ScalarString(it->second, field, &hash); !s.ok()) return s;
    if (!LooksLikeBcrypt(hash)) {
      return FieldError(field,
                        "not a bcrypt hash ($2a$, $2b$ or $2y$, 60 "
                        "characters; e.g. htpasswd -nbB USER PASSWORD)");
    }
    out->basic_auth_users[user] = hash;
  }
  return Status::Ok();
}

// Trainscope's extension: a bearer token file, one token a line.
Status ParseAuthorization(const YAML::Node& node, const std::string& base_dir,
                          WebConfig* out) {
  if (Absent(node)) return Status::Ok();
  if (!node.IsMap()) return FieldError("authorization", "expected a map");
  if (Status s = CheckKeys(node, "authorization", {"type", "credentials_file"});
      !s.ok()) {
    return s;
  }
  std::string type;
  if (Status s = ScalarString(node["type"], "authorization.type", &type);
      !s.ok()) {
    return s;
  }
  if (!type.empty() && type != "Bearer") {
    return FieldError("authorization.type",
                      "\"" + type + "\" is not Bearer (the only type)");
  }
  if (Status s = ScalarString(node["credentials_file"],
                              "authorization.credentials_file",
                              &out->bearer_token_file);
      !s.ok()) {
    return s;
  }
  if (out->bearer_token_file.empty()) {
    return FieldError("authorization.credentials_file", "missing");
  }
  std::string text;
  if (Status s = ReadNamedFile("authorization.credentials_file", base_dir,
                               &out->bearer_token_file, &text);
      !s.ok()) {
    return s;
  }
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    while (!line.empty() &&
           (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.pop_back();
    }
    if (!line.empty()) out->bearer_tokens.push_back(line);
  }
  if (out->bearer_tokens.empty()) {
    return FieldError("authorization.credentials_file",
                      out->bearer_token_file + ": no token in the file");
  }
  return Status::Ok();
}

Status ParseDocument(const YAML::Node& root, const std::string& base_dir,
                     WebConfig* out) {
  if (Absent(root)) return Status::Ok();  // empty file: plain HTTP, no auth
  if (!root.IsMap()) return Status::Error("expected a YAML map at the top");
  if (Status s = CheckKeys(
          root, "", {"tls_server_config", "basic_auth_users", "authorization"});
      !s.ok()) {
    return s;
  }
  if (Status s = ParseTls(root["tls_server_config"], base_dir, out); !s.ok()) {
    return s;
  }
  if (Status s = ParseUsers(root["basic_auth_users"], out); !s.ok()) return s;
  return ParseAuthorization(root["authorization"], base_dir, out);
}

}  // namespace

Status ParseWebConfig(const std::string& yaml, const std::string& base_dir,
                      WebConfig* out) {
  *out = WebConfig{};
  try {
    return ParseDocument(YAML::Load(yaml), base_dir, out);
  } catch (const YAML::Exception& e) {
    return Status::Error("YAML: " + std::string(e.what()));
  } catch (const std::exception& e) {
    return Status::Error(e.what());
  }
}

Status LoadWebConfig(const std::string& path, WebConfig* out) {
  std::string text;
  if (Status read = ReadConfigFile(path, kMaxWebConfigBytes, &text);
      !read.ok()) {
    return read;
  }
  Status s = ParseWebConfig(text, fs::path(path).parent_path().string(), out);
  if (!s.ok()) return Status::Error(path + ": " + s.message());
  return s;
}

}  // namespace trainscope
