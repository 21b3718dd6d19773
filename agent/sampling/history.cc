#include "sampling/history.h"

#include <algorithm>

namespace trainscope {
namespace {

// What the history keeps of a snapshot once a newer one exists: everything
// the diagnosis window reads (pod-level samples, peer traffic, GPU, node),
// without the per-container samples, PIDs and cgroup paths, which only the
// newest snapshot's exposition uses. With 110 pods that is most of a
// snapshot's size, times the history length. The peer pods (thousands in a
// large cluster, a new list whenever one changes) are only read from the
// newest snapshot too.
std::shared_ptr<const Snapshot> WithoutContainerDetail(const Snapshot& full) {
  auto slim = std::make_shared<Snapshot>(full);
  slim->peer_pods = nullptr;
  for (auto& [uid, sample] : slim->pod_samples) {
    // Assigning fresh objects releases the memory; clear() would keep it.
    sample.containers = std::vector<ContainerSample>();
    sample.pids = std::vector<int>();
    sample.cgroup_path = std::string();
  }
  return slim;
}

}  // namespace

History::History(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

void History::Push(std::shared_ptr<const Snapshot> snapshot) {
  // Only the sampler pushes, so the newest cannot change between the two
  // locked sections; the copy is made outside the lock that scrapes take.
  std::shared_ptr<const Snapshot> previous = Latest();
  std::shared_ptr<const Snapshot> slim =
      previous ? WithoutContainerDetail(*previous) : nullptr;
  std::lock_guard lock(mu_);
  if (slim && !ring_.empty() && ring_.back() == previous) {
    ring_.back() = std::move(slim);
  }
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
