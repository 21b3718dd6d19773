#include "history.h"

#include <algorithm>

namespace trainscope {

History::History(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

void History::Push(std::shared_ptr<const Snapshot> snapshot) {
  std::lock_guard lock(mu_);
  ring_.push_back(std::move(snapshot));
  while (ring_.size() > capacity_) ring_.pop_front();
}

std::shared_ptr<const Snapshot> History::Latest() const {
  std::lock_guard lock(mu_);
  return ring_.empty() ? nullptr : ring_.back();
}

std::vector<std::shared_ptr<const Snapshot>> History::Window(
    size_t count) const {
  std::lock_guard lock(mu_);
  size_t n = std::min(count, ring_.size());
  return {ring_.end() - static_cast<std::ptrdiff_t>(n), ring_.end()};
}

}  // namespace trainscope
