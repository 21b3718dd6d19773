#include "history.h"

#include <algorithm>

namespace trainscope {
namespace {

// What the history keeps of a snapshot once a newer one exists: everything
// the diagnosis window reads (pod-level samples, peer traffic, GPU, node),
// without the per-container samples, PIDs and cgroup paths, which only the
// newest snapshot's exposition uses. With 110 pods that is most of a
// snapshot's size, times the history length.
std::shared_ptr<const Snapshot> WithoutContainerDetail(const Snapshot& full) {
  auto slim = std::make_shared<Snapshot>();
  slim->taken_at = full.taken_at;
  slim->sequence = full.sequence;
  slim->pods = full.pods;
  for (const auto& [uid, sample] : full.pod_samples) {
    PodSample& s = slim->pod_samples[uid];
    s.uid = sample.uid;
    s.cgroup = sample.cgroup;
    s.host_network = sample.host_network;
    s.network = sample.network;
  }
  slim->node = full.node;
  slim->gpus = full.gpus;
  slim->gpu_pods = full.gpu_pods;
  slim->peer_traffic = full.peer_traffic;
  slim->flows = full.flows;
  slim->collectors = full.collectors;
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
