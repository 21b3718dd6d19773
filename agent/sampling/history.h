#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "trainscope/snapshot.h"

namespace trainscope {

// The last N snapshots, newest last. Writers (the sampler) and readers
// (scrapes, the report) only exchange shared pointers under the lock. Only
// the newest is kept whole: older ones lose their per-container samples,
// PIDs and cgroup paths (see history.cc), which only the exposition of the
// newest reads.
class History {
 public:
  explicit History(size_t capacity);
  void Push(std::shared_ptr<const Snapshot> snapshot);
  std::shared_ptr<const Snapshot> Latest() const;
  // Up to `count` most recent snapshots, oldest first.
  std::vector<std::shared_ptr<const Snapshot>> Window(size_t count) const;
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::deque<std::shared_ptr<const Snapshot>> ring_;
};

}  // namespace trainscope
