#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace trainscope {

// Checks an Authorization header against the web config's basic-auth users
// (bcrypt hashes, verified with libcrypt) and bearer tokens. Thread-safe.
//
// bcrypt is deliberately slow (tens of milliseconds at cost 10), and a
// scraper sends the same credentials every scrape: a digest of each pair
// that verified is remembered (never the password), as exporter-toolkit
// does, so only the first request pays.
class HttpAuthenticator {
 public:
  enum class Verdict { kAllowed, kMissing, kDenied };

  HttpAuthenticator(std::map<std::string, std::string> users,
                    std::vector<std::string> bearer_tokens);

  bool enabled() const { return !users_.empty() || !tokens_.empty(); }
  Verdict Check(std::string_view authorization) const;
  // The WWW-Authenticate value of a 401.
  std::string Challenge() const;

 private:
  bool CheckBasic(std::string_view credentials) const;
  bool CheckBearer(std::string_view token) const;

  std::map<std::string, std::string> users_;
  std::vector<std::string> tokens_;
  mutable std::mutex mu_;
  mutable std::set<std::string> verified_;  // SHA-256 of user \0 password
};

// Decodes standard base64 (with padding); false when malformed.
bool DecodeBase64(std::string_view in, std::string* out);

// True when `password` matches a crypt(3) `hash` (bcrypt and the others
// libcrypt knows).
bool CryptMatches(const std::string& password, const std::string& hash);

}  // namespace trainscope
