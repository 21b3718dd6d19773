#pragma once

#include <sys/types.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "cgroups.h"
#include "fake_apiserver.h"
#include "layout.h"

namespace trainscope::soak {

// Pods that come and go on one simulated node, as the kubelet and the API
// server would show them: a kubelet-style cgroup (systemd driver, Burstable,
// containerd leaf) in every hierarchy, under a slice of this run's own so
// the agent's eBPF programs see only these pods; a process in it that sends
// one small UDP datagram a second to `traffic_to` (so the flows maps get
// entries; "" = no process); and the Pod object in the fake API server.
//
// Deletion goes in the kubelet's order: process killed, cgroups removed,
// then the object deleted. The destructor removes whatever is left, slice
// included, so an interrupted run leaves nothing behind.
class ChurnPods {
 public:
  ChurnPods(testing::FakeApiServer& api, std::string run_id,
            std::string node_name, std::string traffic_to);
  ~ChurnPods();
  ChurnPods(const ChurnPods&) = delete;
  ChurnPods& operator=(const ChurnPods&) = delete;

  // Creates pod number `k` (names are never reused); returns its name.
  std::string Create(int k);
  void Delete(const std::string& name);
  void DeleteAll();

  size_t alive() const { return pods_.size(); }
  // The v2 directory holding this run's kubepods tree (--cgroup2-path).
  std::string Cgroup2Slice() const;
  // Names and uids of every pod deleted so far, with the time of deletion
  // (seconds on the steady clock) for the settle check.
  const std::map<std::string, double>& deleted() const { return deleted_; }
  const std::map<std::string, std::string>& uid_of() const { return uid_of_; }
  // Directories the destructor could not remove (reported, not thrown).
  const std::vector<std::string>& leftovers() const { return leftovers_; }

 private:
  struct Pod {
    trainsim::SimPod sim;
    pid_t process = -1;
  };
  pid_t StartTraffic(const trainsim::SimPod& pod);
  void RemoveCgroups(const trainsim::SimPod& pod);

  testing::FakeApiServer& api_;
  const std::string run_id_;
  const std::string node_;
  const std::string traffic_to_;
  const std::string slice_;  // "trainscope-soak-<run>.slice"
  trainsim::Cgroups cgroups_;
  std::map<std::string, Pod> pods_;
  std::map<std::string, double> deleted_;
  std::map<std::string, std::string> uid_of_;
  std::vector<std::string> leftovers_;
};

}  // namespace trainscope::soak
