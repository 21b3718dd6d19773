#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "exec.h"
#include "node.h"

namespace trainsim {

// The hang and checkpoint faults on trainsim's side (docs/trainsim.md
// "Hangs"): sigstop and link_blackhole act on the pod from outside; the
// other modes are orders in the pod's fault file (fault_gate.h), and
// blocked_io also gets its hung FUSE mount. Every fault still active is
// ended when this object dies (the run's end, a failure, an interrupt), so
// nothing stays stopped, blackholed or blocked; `trainsim cleanup` covers
// a supervisor that was killed.
class HangFaults {
 public:
  explicit HangFaults(SimNode& node) : node_(node) {}
  ~HangFaults();
  HangFaults(const HangFaults&) = delete;
  HangFaults& operator=(const HangFaults&) = delete;

  // `index` names the fault (its place in the scenario's list).
  void Start(size_t index, const Fault& fault);
  void End(size_t index);

 private:
  struct Active {
    const Fault* fault = nullptr;
    Subprocess hungfs;  // blocked_io's server
  };
  void EndActive(Active& a);
  void ThrottleCheckpoint(const SimPod& pod, const Fault& f);
  std::string MountPoint(const std::string& pod) const;

  SimNode& node_;
  std::map<size_t, Active> active_;
};

// The processes in a pod's cgroups now (from cgroup.procs).
std::vector<pid_t> PodProcesses(const std::vector<std::string>& cgroup_dirs);
// Sends `sig` to each; returns how many it reached.
int SignalAll(const std::vector<pid_t>& pids, int sig);

// Drops every packet to `peer_ip` on the egress of eth0 in netns `netns`
// (a root htb qdisc: u32 match -> a class queueing nothing; so not with a
// bandwidth_limit on the same pod); Unblackhole deletes the root qdisc.
void Blackhole(const std::string& netns, const std::string& peer_ip);
void Unblackhole(const std::string& netns);

}  // namespace trainsim
