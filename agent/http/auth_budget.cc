#include "http/auth_budget.h"

#include <algorithm>

namespace trainscope {

HttpAuthBudget::HttpAuthBudget(Options options) : options_(options) {}

HttpAuthBudget::Ticket HttpAuthBudget::TryAcquire(const std::string& address,
                                                  Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (running_ >= options_.max_concurrent) return Ticket();
  auto it = buckets_.find(address);
  if (it == buckets_.end()) {
    // Forgetting every address at once only hands each a fresh burst: the
    // concurrency bound still holds.
    if (buckets_.size() >= options_.max_addresses) buckets_.clear();
    it = buckets_.emplace(address, Bucket{double(options_.burst), now}).first;
  }
  Bucket& b = it->second;
  const double refilled = std::chrono::duration<double>(now - b.updated) /
                          std::chrono::duration<double>(options_.refill);
  b.tokens = std::min<double>(options_.burst, b.tokens + refilled);
  b.updated = now;
  if (b.tokens < 1) return Ticket();
  b.tokens -= 1;
  ++running_;
  return Ticket(this);
}

void HttpAuthBudget::Release() {
  std::lock_guard lock(mu_);
  --running_;
}

}  // namespace trainscope
