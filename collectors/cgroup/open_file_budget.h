#pragma once

#include <cstddef>

namespace trainscope {

// How many cgroup interface files the reader may keep open between cycles.
// Kept open, a file costs one pread a cycle instead of openat, read and
// close (docs/performance.md); the budget keeps the descriptors it holds
// within the process's open-file limit, with room left for sockets, BPF
// objects and profiles.
class OpenFileBudget {
 public:
  explicit OpenFileBudget(size_t files) : left_(files) {}

  // Up to `wanted` files, within the soft RLIMIT_NOFILE less `reserve`. The
  // soft limit is raised toward the hard limit first when it is lower than
  // `wanted + reserve`, as Go's runtime and systemd's guidance do for
  // daemons (the agent polls with epoll, so high descriptors are safe).
  static OpenFileBudget FromFileLimit(size_t wanted, size_t reserve);

  bool Take() {
    if (left_ == 0) return false;
    --left_;
    return true;
  }
  void Give() { ++left_; }
  size_t left() const { return left_; }

 private:
  size_t left_;
};

}  // namespace trainscope
