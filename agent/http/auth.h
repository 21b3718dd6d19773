#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "http/auth_budget.h"

namespace trainscope {

// Checks an Authorization header against the web config's basic-auth users
// (bcrypt hashes, verified with libcrypt) and bearer tokens. Thread-safe.
//
// bcrypt is deliberately slow (tens of milliseconds at cost 10), and a
// scraper sends the same credentials every scrape: a digest of each pair
// that verified is remembered (never the password), as exporter-toolkit
// does, so only the first request pays. A pair that failed is remembered
// the same way (a scraper with a stale password repeats it every scrape),
// and the bcrypt checks of new pairs are rationed per client address and
// in all (HttpAuthBudget): past the ration a request is kThrottled.
class HttpAuthenticator {
 public:
  enum class Verdict { kAllowed, kMissing, kDenied, kThrottled };

  HttpAuthenticator(std::map<std::string, std::string> users,
                    std::vector<std::string> bearer_tokens,
                    HttpAuthBudget::Options budget = {});

  bool enabled() const { return !users_.empty() || !tokens_.empty(); }
  // `client` keys the per-address ration (HttpConnectionTable::AddressKey).
  Verdict Check(std::string_view authorization,
                const std::string& client = "") const;
  // The WWW-Authenticate value of a 401.
  std::string Challenge() const;

 private:
  Verdict CheckBasic(std::string_view credentials,
                     const std::string& client) const;
  bool CheckBearer(std::string_view token) const;

  std::map<std::string, std::string> users_;
  std::vector<std::string> tokens_;
  mutable HttpAuthBudget budget_;
  mutable std::mutex mu_;
  // SHA-256 of user \0 password, of pairs that verified and that failed.
  mutable std::set<std::string> verified_;
  mutable std::set<std::string> denied_;
};

// True when `password` matches a crypt(3) `hash` (bcrypt and the others
// libcrypt knows).
bool CryptMatches(const std::string& password, const std::string& hash);

}  // namespace trainscope
