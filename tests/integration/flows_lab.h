#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "exposition.h"
#include "kernel_pod.h"

namespace trainscope::testing {

// Runs a shell command; true when it exits 0.
bool Sh(const std::string& command);
// Its stdout ("" when it fails).
std::string ShOut(const std::string& command);
// Ids of the BPF objects a `bpftool -j prog show` / `map show` lists whose
// name `matches` (the machine-wide list: tests tell their agent's objects
// from others' by id). Empty when bpftool's answer is not JSON.
std::optional<std::set<int>> BpfObjectIds(
    const std::string& bpftool_list,
    const std::function<bool(const std::string&)>& matches);

// Network-namespace "pods" on a private bridge, addresses from
// 198.19.0.0/16 (inside the 198.18.0.0/15 benchmarking range), no default
// route, nothing forwarded off the machine. The destructor deletes the
// namespaces (and with them the veths) and the bridge, so a failing test
// leaves nothing behind.
class NetnsLab {
 public:
  explicit NetnsLab(int pods);
  ~NetnsLab();
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  const std::string& netns(int i) const { return netns_[i]; }
  const std::string& ip(int i) const { return ips_[i]; }
  const std::string& host_veth(int i) const { return host_veths_[i]; }
  const std::string& bridge() const { return bridge_; }

 private:
  std::string bridge_;
  std::vector<std::string> netns_, ips_, host_veths_;
};

// A process started inside a KernelPod's cgroups and a network namespace:
// it joins the cgroup before exec, so its sockets belong to the pod (the
// kernel ties a socket to the cgroup of the task that created it). Killed
// and reaped by the destructor.
class PodProcess {
 public:
  PodProcess(const KernelPod& pod, const std::string& netns,
             const std::vector<std::string>& argv,
             const std::string& stdout_path);
  // Same, joining the cgroup(s) with `join` (called with the child's pid
  // before it execs).
  PodProcess(const std::function<void(pid_t)>& join, const std::string& netns,
             const std::vector<std::string>& argv,
             const std::string& stdout_path);
  ~PodProcess();
  PodProcess(const PodProcess&) = delete;
  PodProcess& operator=(const PodProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Exit code, or empty when it was still running at the deadline.
  std::optional<int> Wait(std::chrono::milliseconds deadline);

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// A Guaranteed-QoS pod cgroup (kubepods.slice/kubepods-pod<uid>.slice, one
// level above Burstable pods) in the cgroup v2 hierarchy only: enough for the
// eBPF collector, which only looks at v2. Removed by the destructor (after
// the caller's processes are gone).
class GuaranteedV2Pod {
 public:
  GuaranteedV2Pod();
  ~GuaranteedV2Pod();
  GuaranteedV2Pod(const GuaranteedV2Pod&) = delete;
  GuaranteedV2Pod& operator=(const GuaranteedV2Pod&) = delete;
  const std::string& uid() const { return uid_; }
  const std::string& container_id() const { return container_id_; }
  void MoveIn(pid_t pid) const;

 private:
  std::string uid_, container_id_;
  std::filesystem::path container_dir_;
  std::vector<std::filesystem::path> created_;
};

// A plain child process (tcpdump, the CLI) with its output in a file;
// SIGKILLed and reaped by the destructor unless it already exited.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv,
               const std::string& stdout_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  pid_t pid() const { return pid_; }
  void Signal(int sig);
  std::optional<int> Wait(std::chrono::milliseconds deadline);

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// Reads a whole file ("" when missing).
std::string Slurp(const std::string& path);

// Whether a /proc/<pid>/net/tcp (or tcp6) table has a socket listening on
// `port`.
bool ListensOn(const std::string& proc_net_tcp, int port);
// Waits until the process `pid` (a server inside a pod's network namespace:
// /proc/<pid>/net is that namespace's) listens on TCP `port`; false at the
// deadline. Clients connect after it, not after a guessed sleep: on two
// loaded cores a server can take longer than any fixed pause to bind.
bool WaitListening(pid_t pid, int port, std::chrono::milliseconds deadline);

// A bounded iperf3 client run whose truth is what the server received:
// 1 s at 16 Mbit/s (about 2 MB), JSON output. Not a byte count (-n): iperf3
// ends such a test once the client has written the bytes, and the server
// closes the connection before the rest of the client's socket buffer is
// sent (of -n 2M the server received 0.38-1.57 MB in 15 runs on busy cores).
std::vector<std::string> IperfClientArgs(const std::string& server_ip,
                                         int port = 5201);
// The payload bytes the server received, from the client's JSON output.
std::optional<double> IperfReceivedBytes(const std::string& client_json);

// Waits (at most 8 s) until the agent on `port` has completed `more`
// sampling cycles past the current one: pods reach the BPF map (and pod
// addresses the capture) at a sample, and traffic before that is not
// attributed to them.
void WaitSamplerCycles(int port, int more);

// A PodList item for a kernel pod as the agent's file discovery reads it:
// Running on node-a with `ip`, its container id in containerStatuses.
nlohmann::json KernelPodJson(const KernelPod& pod, const std::string& ns,
                             const std::string& name, const std::string& ip);

}  // namespace trainscope::testing
