#include "synthetic_node.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace trainscope::cycle_bench {
namespace fs = std::filesystem;
namespace {

constexpr int kPodsPerJob = 10;  // 1 PS + 9 workers, as bench/macro's node
constexpr int kFirstPid = 10000;
constexpr int kPidsPerPod = 2;  // tensorflow + pause
constexpr uint64_t kHostNetns = 4026531840;
constexpr const char* kNamespace = "training";

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

void MakeDirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir.string());
}

std::string Hex(uint64_t value, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*llx", width,
                static_cast<unsigned long long>(value));
  return buf;
}

// Deterministic but varied: UUID-shaped pod uids, 64-hex container ids.
std::string PodUid(int index) {
  const uint64_t x = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(index + 1);
  return Hex(x >> 32, 8) + "-" + Hex((x >> 16) & 0xffff, 4) + "-4" +
         Hex(x & 0xfff, 3) + "-8" + Hex((x >> 8) & 0xfff, 3) + "-" +
         Hex(static_cast<uint64_t>(index) * 7919 + 0x5eed, 12);
}

std::string ContainerId(int index, int which) {
  std::string id;
  uint64_t x =
      0xd1b54a32d192ed03ULL * static_cast<uint64_t>(index * 2 + which + 1);
  for (int i = 0; i < 4; ++i) {
    id += Hex(x, 16);
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  }
  return id;
}

std::string Underscored(std::string uid) {
  for (char& c : uid)
    if (c == '-') c = '_';
  return uid;
}

std::string ProcStatLine(int pid, const std::string& comm, char state,
                         uint64_t utime, uint64_t stime) {
  // Fields 3.. of proc(5): state ppid pgrp session tty tpgid flags minflt
  // cminflt majflt cmajflt utime stime cutime cstime priority nice threads
  // itreal starttime vsize rss, then the rest as the kernel prints them.
  return std::to_string(pid) + " (" + comm + ") " + state + " 1 " +
         std::to_string(pid) + " " + std::to_string(pid) +
         " 0 -1 4194560 12345 0 12 0 " + std::to_string(utime) + " " +
         std::to_string(stime) +
         " 0 0 20 0 16 0 123456 2147483648 65536 18446744073709551615 1 1 0 "
         "0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
}

std::string Pressure(uint64_t some, uint64_t full) {
  return "some avg10=0.00 avg60=0.12 avg300=0.08 total=" +
         std::to_string(some) +
         "\nfull avg10=0.00 avg60=0.05 avg300=0.02 total=" +
         std::to_string(full) + "\n";
}

std::string NetDev(uint64_t rx, uint64_t tx) {
  const std::string r = std::to_string(rx), t = std::to_string(tx);
  return "Inter-|   Receive                                                |  "
         "Transmit\n face |bytes    packets errs drop fifo frame compressed "
         "multicast|bytes    packets errs drop fifo colls carrier compressed\n"
         "    lo:       4242        3 0 0 0 0 0 0       4242        3 0 0 0 0 "
         "0 0\n  eth0: " +
         r + " " + std::to_string(rx / 1400) + " 0 0 0 0 0 0 " + t + " " +
         std::to_string(tx / 1400) + " 0 0 0 0 0 0\n";
}

// The files a v2 cgroup directory holds that never change between cycles.
void WriteStaticCgroupFiles(const fs::path& dir, const std::string& cpu_max,
                            const std::string& memory_max,
                            const std::string& procs) {
  WriteFile(dir / "cgroup.controllers", "cpuset cpu io memory pids\n");
  WriteFile(dir / "cgroup.procs", procs);
  WriteFile(dir / "cpu.max", cpu_max);
  WriteFile(dir / "memory.max", memory_max);
  WriteFile(dir / "memory.events",
            "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n");
}

// The counters of one cgroup after `tick` samples; `share` (percent of the
// pod) makes leaves differ from their pod. Each sample adds only a little:
// the agent turns deltas into rates over wall-clock time between samples,
// which varies from run to run (valgrind is slow), and small steps keep
// every rate far below any diagnosis threshold whatever that time is, so
// the same code runs in every run.
void WriteCgroupCounters(CounterFiles& files, const fs::path& dir,
                         uint64_t tick, uint64_t share) {
  const uint64_t usage = 9'000'000'000 * share / 100 + tick * 2 * share;
  const uint64_t periods = 900'000 + tick * 10;
  files.Write(dir / "cpu.stat",
              "usage_usec " + std::to_string(usage) + "\nuser_usec " +
                  std::to_string(usage * 7 / 10) + "\nsystem_usec " +
                  std::to_string(usage * 3 / 10) +
                  "\ncore_sched.force_idle_usec 0\nnr_periods " +
                  std::to_string(periods) + "\nnr_throttled " +
                  std::to_string(periods / 20) + "\nthrottled_usec " +
                  std::to_string(4'000'000 + tick) +
                  "\nnr_bursts 0\nburst_usec 0\n");
  const uint64_t anon = (2000 + tick % 50) * share * 1024;
  const uint64_t file = 800 * share * 1024;
  files.Write(dir / "memory.current", std::to_string(anon + file) + "\n");
  files.Write(dir / "memory.stat",
              "anon " + std::to_string(anon) + "\nfile " +
                  std::to_string(file) +
                  "\nkernel 12288\nkernel_stack 16384\npagetables 4096\n"
                  "sec_pagetables 0\npercpu 0\nsock 0\nvmalloc 0\nshmem 0\n"
                  "zswap 0\nzswapped 0\nfile_mapped 4096\nfile_dirty 0\n"
                  "file_writeback 0\nswapcached 0\nanon_thp 0\nfile_thp 0\n"
                  "shmem_thp 0\ninactive_anon " +
                  std::to_string(anon / 4) + "\nactive_anon " +
                  std::to_string(anon - anon / 4) + "\ninactive_file " +
                  std::to_string(file / 3) + "\nactive_file " +
                  std::to_string(file - file / 3) +
                  "\nunevictable 0\nslab_reclaimable 8192\n"
                  "slab_unreclaimable 4096\nslab 12288\n"
                  "workingset_refault_anon 0\nworkingset_refault_file 5\n"
                  "pgfault " +
                  std::to_string(1234 + tick * 17) + "\npgmajfault 1\n");
  const uint64_t io = 10'000'000'000 * share / 100;
  files.Write(dir / "io.stat",
              "259:0 rbytes=" + std::to_string(io + tick * 40 * share) +
                  " wbytes=" + std::to_string(io / 4 + tick * 10 * share) +
                  " rios=" + std::to_string(io / 65536 + tick) +
                  " wios=" + std::to_string(io / 262144 + tick) +
                  " dbytes=0 dios=0\n8:0 rbytes=4096 wbytes=0 rios=1 wios=0 "
                  "dbytes=0 dios=0\n");
  files.Write(dir / "cpu.pressure", Pressure(90'000 + tick, 30'000 + tick));
  files.Write(dir / "memory.pressure", Pressure(1'000 + tick, 500 + tick));
  files.Write(dir / "io.pressure", Pressure(4'000 + tick, 2'000 + tick));
}

}  // namespace

void CounterFiles::Write(const fs::path& path, const std::string& text) {
  UniqueFd& fd = files_[path.string()];
  if (!fd.valid()) {
    fd.reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  }
  if (!fd.valid() || ::ftruncate(fd.get(), 0) != 0 ||
      ::pwrite(fd.get(), text.data(), text.size(), 0) !=
          static_cast<ssize_t>(text.size())) {
    throw std::runtime_error("cannot write " + path.string());
  }
}

SyntheticNode::SyntheticNode(int pods) {
  std::string tmpl = (fs::temp_directory_path() / "trainscope-cycle-XXXXXX");
  if (!::mkdtemp(tmpl.data())) {
    throw std::runtime_error("mkdtemp failed under " +
                             fs::temp_directory_path().string());
  }
  root_ = tmpl;
  host_.proc = root_ / "proc";
  host_.sys = root_ / "sys";
  host_.cgroup_root = root_ / "sys/fs/cgroup";
  try {
    WriteNodeFiles();
    for (int i = 0; i < pods; ++i) WritePod(i);
    Advance();
  } catch (...) {
    std::error_code ec;
    fs::remove_all(root_, ec);
    throw;
  }
}

SyntheticNode::~SyntheticNode() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

void SyntheticNode::WriteNodeFiles() {
  const fs::path cg = host_.cgroup_root;
  MakeDirs(cg / "kubepods.slice/kubepods-burstable.slice");
  MakeDirs(cg / "system.slice/containerd.service");
  WriteFile(cg / "cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
  WriteFile(cg / "cgroup.procs", "1\n");
  WriteFile(cg / "system.slice/containerd.service/cgroup.procs", "900\n");
  MakeDirs(host_.proc / "1/ns");
  MakeDirs(host_.proc / "1/net");
  fs::create_symlink("net:[" + std::to_string(kHostNetns) + "]",
                     host_.proc / "1/ns/net");
  WriteFile(host_.proc / "meminfo",
            "MemTotal:       263856128 kB\nMemFree:        102400000 kB\n"
            "MemAvailable:   204800000 kB\nBuffers:          204800 kB\n"
            "Cached:         40960000 kB\n");
  MakeDirs(host_.sys / "class/net/eth0/device");
  MakeDirs(host_.sys / "class/net/cni0");
  WriteFile(host_.sys / "class/net/eth0/speed", "25000\n");
  WriteFile(host_.sys / "class/net/cni0/speed", "10000\n");
}

void SyntheticNode::WritePod(int index) {
  Pod pod;
  const int job = index / kPodsPerJob, task = index % kPodsPerJob;
  const bool ps = task == 0;
  PodInfo& info = pod.info;
  info.uid = PodUid(index);
  info.namespace_name = kNamespace;
  info.training_job = "job" + std::to_string(job);
  info.role = ps ? Role::kPs : Role::kWorker;
  info.replica_index = ps ? 0 : task - 1;
  info.name = info.training_job + (ps ? "-ps-" : "-worker-") +
              std::to_string(info.replica_index);
  info.node = "node-a";
  info.phase = "Running";
  info.pod_ip = "10.244." + std::to_string(index / 250) + "." +
                std::to_string(index % 250 + 2);
  info.pod_ips = {info.pod_ip};
  info.labels = {{"training.kubeflow.org/job-name", info.training_job},
                 {"training.kubeflow.org/replica-type", ps ? "ps" : "worker"},
                 {"training.kubeflow.org/replica-index",
                  std::to_string(info.replica_index)}};
  info.owner_kind = "TFJob";
  info.job_kind = JobKind::kTFJob;
  info.framework = Framework::kTensorFlow2;
  info.spec_cpu_limit_cores = 2.0;
  info.spec_memory_limit_bytes = 4ULL << 30;
  ContainerInfo tf;
  tf.name = "tensorflow";
  tf.id = ContainerId(index, 0);
  tf.runtime = "containerd";
  tf.restart_count = 0;
  tf.running_since_s = 1'800'000'000;
  info.containers = {tf};
  info.images = {"tensorflow/tensorflow:2.15.0"};

  const std::string uid_ = Underscored(info.uid);
  pod.cgroup = host_.cgroup_root / "kubepods.slice/kubepods-burstable.slice" /
               ("kubepods-burstable-pod" + uid_ + ".slice");
  pod.container = pod.cgroup / ("cri-containerd-" + tf.id + ".scope");
  pod.pause =
      pod.cgroup / ("cri-containerd-" + ContainerId(index, 1) + ".scope");
  pod.pid = kFirstPid + index * kPidsPerPod;
  MakeDirs(pod.container);
  MakeDirs(pod.pause);
  const std::string limit = "200000 100000\n", memory = "4294967296\n";
  WriteStaticCgroupFiles(pod.cgroup, limit, memory, "");
  WriteStaticCgroupFiles(pod.container, limit, memory,
                         std::to_string(pod.pid) + "\n");
  WriteStaticCgroupFiles(pod.pause, "max 100000\n", "max\n",
                         std::to_string(pod.pid + 1) + "\n");
  const std::string netns =
      "net:[" + std::to_string(kHostNetns + 100 + index) + "]";
  const std::string rel =
      "/" + fs::relative(pod.cgroup, host_.cgroup_root).string();
  WriteProcess(pod.pid, kThreadsPerProcess, netns,
               rel + "/" + pod.container.filename().string());
  WriteProcess(pod.pid + 1, 1, netns,
               rel + "/" + pod.pause.filename().string());
  pods_.push_back(info);
  layout_.push_back(std::move(pod));
}

void SyntheticNode::WriteProcess(int pid, int threads, const std::string& netns,
                                 const fs::path& cgroup) {
  const fs::path dir = host_.proc / std::to_string(pid);
  MakeDirs(dir / "ns");
  MakeDirs(dir / "net");
  fs::create_symlink(netns, dir / "ns/net");
  WriteFile(dir / "cgroup", "0::" + cgroup.string() + "\n");
  const std::string comm = threads > 1 ? "python3" : "pause";
  WriteFile(dir / "stat", ProcStatLine(pid, comm, 'S', 100, 20));
  for (int t = 0; t < threads; ++t) {
    const int tid = t == 0 ? pid : 1'000'000 + pid * 100 + t;
    MakeDirs(dir / "task" / std::to_string(tid));
    WriteFile(dir / "task" / std::to_string(tid) / "stat",
              ProcStatLine(tid, comm, 'S', 100 + t, 20));
  }
}

void SyntheticNode::Advance() {
  ++tick_;
  const uint64_t t = static_cast<uint64_t>(tick_);
  // 10% busy, in clock ticks.
  counters_.Write(host_.proc / "stat",
                  "cpu  " + std::to_string(10'000'000 + t) + " 0 3000000 " +
                      std::to_string(117'000'000 + 9 * t) +
                      " 20 0 6 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\n"
                      "intr 123456789\nctxt 987654321\nbtime 1763700000\n"
                      "processes 4242\nprocs_running 3\nprocs_blocked 0\n");
  counters_.Write(host_.proc / "1/net/dev",
                  NetDev(t * 10'000 + 1'000'000'000, t * 9'000 + 900'000'000));
  for (size_t i = 0; i < layout_.size(); ++i) {
    WriteCounters(layout_[i], static_cast<int>(i));
  }
}

void SyntheticNode::WriteCounters(const Pod& pod, int index) {
  const uint64_t t = static_cast<uint64_t>(tick_);
  // A PS moves more bytes than a worker, as in the field.
  const uint64_t bytes =
      (pod.info.role == Role::kPs ? 8 : 1) * (1'000'000'000 + 1'000 * t);
  WriteCgroupCounters(counters_, pod.cgroup, t, 100);
  WriteCgroupCounters(counters_, pod.container, t, 98);
  WriteCgroupCounters(counters_, pod.pause, t, 2);
  counters_.Write(host_.proc / std::to_string(pod.pid) / "net/dev",
                  NetDev(bytes + static_cast<uint64_t>(index), bytes / 2));
  counters_.Write(host_.proc / std::to_string(pod.pid + 1) / "net/dev",
                  NetDev(bytes + static_cast<uint64_t>(index), bytes / 2));
}

}  // namespace trainscope::cycle_bench
