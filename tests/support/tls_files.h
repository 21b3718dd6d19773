#pragma once

#include <string>

namespace trainscope::testing {

// Throw-away TLS material made with the openssl command for one test run:
// a CA, a server certificate for 127.0.0.1 / localhost and a client
// certificate signed by it, and a self-signed client certificate it does
// not know.
struct TlsFiles {
  std::string dir;
  std::string ca_cert, ca_key;
  std::string server_cert, server_key;
  std::string client_cert, client_key;
  std::string stranger_cert, stranger_key;
};

// Writes the files under `dir` (created); false with `error` set when the
// openssl command fails.
bool MakeTlsFiles(const std::string& dir, TlsFiles* out, std::string* error);

// A bcrypt ($2b$, cost 5) hash of `password`, from libcrypt.
std::string BcryptHash(const std::string& password);

// Standard base64 with padding: "user:password" for an Authorization: Basic
// header.
std::string Base64(const std::string& in);

// Writes `text` to `path`; false on failure.
bool WriteFile(const std::string& path, const std::string& text);

}  // namespace trainscope::testing
