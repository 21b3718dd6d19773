#include "tls_files.h"

#include <crypt.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;

bool Run(const std::string& command, std::string* error) {
  const std::string quiet = command + " >/dev/null 2>&1";
  if (std::system(quiet.c_str()) == 0) return true;
  *error = "failed: " + command;
  return false;
}

// A P-256 key and a certificate signed by the CA (or self-signed when
// `ca` is empty), with `extensions` (an openssl extfile line).
bool MakeCert(const fs::path& dir, const std::string& name,
              const std::string& subject, const std::string& ca,
              const std::string& extensions, std::string* error) {
  const std::string key = (dir / (name + ".key")).string();
  const std::string crt = (dir / (name + ".crt")).string();
  const std::string csr = (dir / (name + ".csr")).string();
  const std::string ext = (dir / (name + ".ext")).string();
  if (!WriteFile(ext, extensions + "\n")) {
    *error = "cannot write " + ext;
    return false;
  }
  const std::string newkey =
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
      "-keyout " +
      key + " -subj " + subject;
  if (ca.empty()) {
    return Run(newkey + " -x509 -days 2 -out " + crt +
                   " -addext basicConstraints=critical,CA:TRUE",
               error);
  }
  const fs::path ca_base = dir / ca;
  return Run(newkey + " -out " + csr, error) &&
         Run("openssl x509 -req -in " + csr + " -CA " + ca_base.string() +
                 ".crt -CAkey " + ca_base.string() +
                 ".key -CAcreateserial -days 2 -out " + crt + " -extfile " +
                 ext,
             error);
}

}  // namespace

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

bool MakeTlsFiles(const std::string& dir, TlsFiles* out, std::string* error) {
  const fs::path d(dir);
  std::error_code ec;
  fs::create_directories(d, ec);
  if (ec) {
    *error = "cannot create " + dir + ": " + ec.message();
    return false;
  }
  if (!MakeCert(d, "ca", "/CN=trainscope-test-ca", "", "", error) ||
      !MakeCert(d, "server", "/CN=localhost", "ca",
                "subjectAltName=IP:127.0.0.1,DNS:localhost", error) ||
      !MakeCert(d, "client", "/CN=prometheus", "ca",
                "extendedKeyUsage=clientAuth", error) ||
      !MakeCert(d, "stranger", "/CN=stranger", "", "", error)) {
    return false;
  }
  auto path = [&](const char* name) { return (d / name).string(); };
  *out = TlsFiles{
      .dir = dir,
      .ca_cert = path("ca.crt"),
      .ca_key = path("ca.key"),
      .server_cert = path("server.crt"),
      .server_key = path("server.key"),
      .client_cert = path("client.crt"),
      .client_key = path("client.key"),
      .stranger_cert = path("stranger.crt"),
      .stranger_key = path("stranger.key"),
  };
  return true;
}

std::string BcryptHash(const std::string& password) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (!crypt_gensalt_rn("$2b$", 5, nullptr, 0, salt, sizeof salt)) return {};
  auto data = std::make_unique<crypt_data>();
  const char* hash = crypt_r(password.c_str(), salt, data.get());
  return hash && hash[0] != '*' ? std::string(hash) : std::string();
}

std::string Base64(const std::string& in) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t n = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) n |= static_cast<unsigned char>(in[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

}  // namespace trainscope::testing
