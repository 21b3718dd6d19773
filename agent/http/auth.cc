#include "http/auth.h"

#include <crypt.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include <array>
#include <cctype>
#include <cstring>
#include <memory>

#include "trainscope/base64.h"

namespace trainscope {
namespace {

// Verified (and failed) pairs remembered at most; beyond it the memory
// starts over (a flood of distinct credentials only costs bcrypt time
// again, which HttpAuthBudget rations).
constexpr size_t kMaxVerified = 1024;

// A well-formed bcrypt hash of nothing anyone knows: an unknown user costs
// the same bcrypt time as a known one, so timing does not list the users.
constexpr const char* kDummyHash =
    "$2b$10$abcdefghijklmnopqrstuuAqnKkHJnxlJDhQCH3kPvGZ2fJ7B6k0q";

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

std::string Sha256(std::string_view data) {
  std::array<unsigned char, 32> digest{};
  gnutls_hash_fast(GNUTLS_DIG_SHA256, data.data(), data.size(), digest.data());
  return std::string(reinterpret_cast<const char*>(digest.data()),
                     digest.size());
}

// "Basic xyz" -> "xyz" when the scheme matches (case-insensitively).
bool StripScheme(std::string_view header, std::string_view scheme,
                 std::string_view* rest) {
  if (header.size() <= scheme.size() || header[scheme.size()] != ' ') {
    return false;
  }
  for (size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) !=
        std::tolower(static_cast<unsigned char>(scheme[i]))) {
      return false;
    }
  }
  std::string_view value = header.substr(scheme.size() + 1);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  *rest = value;
  return true;
}

}  // namespace

bool CryptMatches(const std::string& password, const std::string& hash) {
  // crypt_data is 32 KiB: not for an event-loop thread's stack.
  auto data = std::make_unique<crypt_data>();
  const char* out = crypt_r(password.c_str(), hash.c_str(), data.get());
  // libcrypt answers a failure with a string starting with '*'.
  if (out == nullptr || out[0] == '*') return false;
  return ConstantTimeEquals(out, hash);
}

HttpAuthenticator::HttpAuthenticator(std::map<std::string, std::string> users,
                                     std::vector<std::string> bearer_tokens,
                                     HttpAuthBudget::Options budget)
    : users_(std::move(users)),
      tokens_(std::move(bearer_tokens)),
      budget_(budget) {}

HttpAuthenticator::Verdict HttpAuthenticator::Check(
    std::string_view authorization, const std::string& client) const {
  if (!enabled()) return Verdict::kAllowed;
  if (authorization.empty()) return Verdict::kMissing;
  std::string_view value;
  if (!users_.empty() && StripScheme(authorization, "Basic", &value)) {
    return CheckBasic(value, client);
  }
  if (!tokens_.empty() && StripScheme(authorization, "Bearer", &value)) {
    return CheckBearer(value) ? Verdict::kAllowed : Verdict::kDenied;
  }
  return Verdict::kDenied;
}

HttpAuthenticator::Verdict HttpAuthenticator::CheckBasic(
    std::string_view credentials, const std::string& client) const {
  std::string decoded;
  if (!DecodeBase64(credentials, &decoded)) return Verdict::kDenied;
  const size_t colon = decoded.find(':');
  if (colon == std::string::npos) return Verdict::kDenied;
  const std::string user = decoded.substr(0, colon);
  const std::string password = decoded.substr(colon + 1);
  // crypt(3) reads a C string: "secret\0junk" would check as "secret".
  if (user.find('\0') != std::string::npos ||
      password.find('\0') != std::string::npos) {
    return Verdict::kDenied;
  }
  const std::string key = Sha256(user + '\0' + password);
  {
    std::lock_guard lock(mu_);
    if (verified_.count(key)) return Verdict::kAllowed;
    if (denied_.count(key)) return Verdict::kDenied;
  }
  auto ticket = budget_.TryAcquire(client, HttpAuthBudget::Clock::now());
  if (!ticket) return Verdict::kThrottled;
  auto it = users_.find(user);
  const bool known = it != users_.end();
  const bool matches = CryptMatches(password, known ? it->second : kDummyHash);
  const bool allowed = known && matches;
  std::lock_guard lock(mu_);
  std::set<std::string>& remembered = allowed ? verified_ : denied_;
  if (remembered.size() >= kMaxVerified) remembered.clear();
  remembered.insert(key);
  return allowed ? Verdict::kAllowed : Verdict::kDenied;
}

bool HttpAuthenticator::CheckBearer(std::string_view token) const {
  bool found = false;
  for (const auto& expected : tokens_) {
    found |= ConstantTimeEquals(token, expected);
  }
  return found;
}

std::string HttpAuthenticator::Challenge() const {
  if (!users_.empty()) return "Basic realm=\"trainscope\", charset=\"UTF-8\"";
  return "Bearer realm=\"trainscope\"";
}

}  // namespace trainscope
