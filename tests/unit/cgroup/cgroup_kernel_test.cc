// Privileged: runs the cgroup collector against this machine's real cgroup
// hierarchies. It creates a kubelet-style pod cgroup with one container leaf
// in every hierarchy the collector reads, moves a forked busy process into
// it, and compares what the collector reports with the kernel's own files.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cgroup/cgroup_collector.h"
#include "cgroup/cgroup_parse.h"
#include "child_process.h"
#include "kube/pod_cgroups.h"
#include "trainscope/file_util.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr uint64_t kPodMemoryLimit = 256ull << 20;
constexpr uint64_t kContainerMemoryLimit = 128ull << 20;
constexpr size_t kTouchedBytes = 32u << 20;

std::string RandomHex(size_t n) {
  static std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(n, '0');
  for (auto& c : out) c = kHex[rng() % 16];
  return out;
}

std::string RandomUid() {
  const auto h = RandomHex(32);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-4" + h.substr(13, 3) + "-a" +
         h.substr(17, 3) + "-" + h.substr(20, 12);
}

bool WriteFile(const fs::path& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

uint64_t ReadUint(const fs::path& path) {
  const auto text = ReadSmallFile(path);
  const auto value = text ? cgroup::ParseUint(*text) : std::nullopt;
  if (!value) ADD_FAILURE() << "cannot read a number from " << path;
  return value.value_or(0);
}

uint64_t ReadKey(const fs::path& path, std::string_view key) {
  const auto text = ReadSmallFile(path);
  const auto value = text ? cgroup::FlatKeyedValue(*text, key) : std::nullopt;
  if (!value) ADD_FAILURE() << "no " << key << " in " << path;
  return value.value_or(0);
}

// Owns what the test creates: the busy child and the cgroup directories.
// Cleanup kills the child, then removes only directories this object made,
// innermost first; it runs from TearDown and again from the destructor.
class CgroupSandbox {
 public:
  ~CgroupSandbox() { Cleanup(); }

  // Creates every missing component of `rel` below `root`.
  bool MakeDirs(const fs::path& root, const fs::path& rel) {
    fs::path dir = root;
    for (const auto& part : rel) {
      dir /= part;
      if (::mkdir(dir.c_str(), 0755) == 0) {
        created_.push_back(dir);
      } else if (errno != EEXIST) {
        ADD_FAILURE() << "mkdir " << dir << ": " << std::strerror(errno);
        return false;
      }
    }
    return true;
  }

  // Forks a child that waits for the go signal, touches some memory and
  // burns CPU (for at most 30 s, should the test die without cleaning up).
  pid_t StartBusyChild() {
    int fds[2];
    if (::pipe(fds) != 0) return -1;
    const pid_t pid = trainscope::testing::ForkTiedToParent();
    if (pid == 0) {
      ::close(fds[1]);
      char go;
      if (::read(fds[0], &go, 1) != 1) ::_exit(1);
      auto* mem = static_cast<volatile char*>(::malloc(kTouchedBytes));
      for (size_t i = 0; mem != nullptr && i < kTouchedBytes; i += 4096) {
        mem[i] = 1;
      }
      const auto end = std::chrono::steady_clock::now() + 30s;
      while (std::chrono::steady_clock::now() < end) {
      }
      ::_exit(0);
    }
    ::close(fds[0]);
    go_fd_ = fds[1];
    child_ = pid;
    return pid;
  }

  void Go() {
    if (go_fd_ >= 0) {
      const char go = 'g';
      EXPECT_EQ(::write(go_fd_, &go, 1), 1);
      ::close(go_fd_);
      go_fd_ = -1;
    }
  }

  void Cleanup() {
    if (go_fd_ >= 0) {
      ::close(go_fd_);
      go_fd_ = -1;
    }
    if (child_ > 0) {
      ::kill(child_, SIGKILL);
      ::waitpid(child_, nullptr, 0);
      child_ = -1;
    }
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
      // A dying task can keep a cgroup busy for a moment.
      for (int attempt = 0; attempt < 50; ++attempt) {
        if (::rmdir(it->c_str()) == 0 || errno == ENOENT) break;
        if (errno != EBUSY) {
          // ENOTEMPTY: something else (another pod) lives there now.
          break;
        }
        std::this_thread::sleep_for(20ms);
      }
    }
    created_.clear();
  }

 private:
  std::vector<fs::path> created_;
  pid_t child_ = -1;
  int go_fd_ = -1;
};

class CgroupKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups";
    hierarchies_ = DetectHierarchies(host_.cgroup_root);
    if (!hierarchies_.unified && hierarchies_.v1.empty()) {
      GTEST_SKIP() << "no cgroup hierarchy under " << host_.cgroup_root;
    }
    sandbox_ = std::make_unique<CgroupSandbox>();
  }

  void TearDown() override {
    if (sandbox_) sandbox_->Cleanup();
  }

  // Every distinct hierarchy the collector reads values or PIDs from.
  std::vector<fs::path> Roots() const {
    std::vector<fs::path> roots;
    std::set<fs::path> seen;
    if (hierarchies_.unified) roots.push_back(*hierarchies_.unified);
    for (const char* c : {"cpu", "cpuacct", "memory", "blkio", "pids"}) {
      const auto it = hierarchies_.v1.find(c);
      if (it == hierarchies_.v1.end()) continue;
      if (seen.insert(fs::weakly_canonical(it->second)).second) {
        roots.push_back(it->second);
      }
    }
    return roots;
  }

  // The cgroup directory of `rel` in the v1 hierarchy of `controller`.
  std::optional<fs::path> V1Dir(const char* controller,
                                const fs::path& rel) const {
    const auto it = hierarchies_.v1.find(controller);
    if (it == hierarchies_.v1.end()) return std::nullopt;
    return it->second / rel;
  }

  // A burstable pod's cgroup, relative to a hierarchy root, as the kubelet's
  // systemd driver names it.
  static fs::path PodRel(const std::string& uid) {
    std::string underscored = uid;
    std::replace(underscored.begin(), underscored.end(), '-', '_');
    return fs::path("kubepods.slice") / "kubepods-burstable.slice" /
           ("kubepods-burstable-pod" + underscored + ".slice");
  }

  // The cgroup of pod `uid` with one container leaf `id`, in every
  // hierarchy the collector reads.
  struct PodCgroupDirs {
    fs::path pod, leaf;
  };
  PodCgroupDirs MakePodCgroup(const std::string& uid, const std::string& id) {
    const fs::path pod = PodRel(uid);
    PodCgroupDirs dirs{pod, pod / ("cri-containerd-" + id + ".scope")};
    for (const auto& root : Roots()) {
      EXPECT_TRUE(sandbox_->MakeDirs(root, dirs.leaf)) << root;
    }
    return dirs;
  }

  static size_t OpenFds() {
    return static_cast<size_t>(std::distance(
        fs::directory_iterator("/proc/self/fd"), fs::directory_iterator()));
  }

  HostPaths host_;
  CgroupHierarchies hierarchies_;
  std::unique_ptr<CgroupSandbox> sandbox_;
};

TEST_F(CgroupKernelTest, CollectorMatchesTheKernelForABusyPod) {
  const std::string uid = RandomUid();
  const std::string id = RandomHex(64);
  const auto [pod_rel, leaf_rel] = MakePodCgroup(uid, id);
  ASSERT_FALSE(HasFailure());
  const auto roots = Roots();

  // Limits where this kernel has them: v2 only when the cpu/memory
  // controllers are enabled there, else v1. Pod first: a v1 child's quota
  // may not exceed its parent's.
  const bool v2_cpu = hierarchies_.unified &&
                      fs::exists(*hierarchies_.unified / pod_rel / "cpu.max");
  const bool v2_memory =
      hierarchies_.unified &&
      fs::exists(*hierarchies_.unified / pod_rel / "memory.max");
  for (const auto& [rel, quota] :
       {std::pair{pod_rel, 100000}, std::pair{leaf_rel, 50000}}) {
    if (v2_cpu) {
      ASSERT_TRUE(WriteFile(*hierarchies_.unified / rel / "cpu.max",
                            std::to_string(quota) + " 100000"));
    } else {
      const auto dir = V1Dir("cpu", rel);
      ASSERT_TRUE(dir) << "no cpu controller";
      ASSERT_TRUE(WriteFile(*dir / "cpu.cfs_period_us", "100000"));
      ASSERT_TRUE(WriteFile(*dir / "cpu.cfs_quota_us", std::to_string(quota)));
    }
  }
  for (const auto& [rel, limit] :
       {std::pair{pod_rel, kPodMemoryLimit},
        std::pair{leaf_rel, kContainerMemoryLimit}}) {
    if (v2_memory) {
      ASSERT_TRUE(WriteFile(*hierarchies_.unified / rel / "memory.max",
                            std::to_string(limit)));
    } else {
      const auto dir = V1Dir("memory", rel);
      ASSERT_TRUE(dir) << "no memory controller";
      ASSERT_TRUE(
          WriteFile(*dir / "memory.limit_in_bytes", std::to_string(limit)));
    }
  }

  const pid_t child = sandbox_->StartBusyChild();
  ASSERT_GT(child, 0);
  for (const auto& root : roots) {
    ASSERT_TRUE(
        WriteFile(root / leaf_rel / "cgroup.procs", std::to_string(child)))
        << "moving " << child << " into " << root / leaf_rel;
  }
  const bool v2_usage =
      hierarchies_.unified &&
      fs::exists(*hierarchies_.unified / leaf_rel / "cpu.stat");
  // CPU usage: from v2 cpu.stat when the unified tree has it (hybrid hosts
  // too), else v1 cpuacct.usage.
  const auto kernel_usage = [&](const fs::path& rel) {
    return v2_usage ? ReadKey(*hierarchies_.unified / rel / "cpu.stat",
                              "usage_usec") /
                          1e6
                    : ReadUint(*V1Dir("cpuacct", rel) / "cpuacct.usage") / 1e9;
  };

  sandbox_->Go();
  const auto start = std::chrono::steady_clock::now();
  // Burn about half a second of wall time, longer on a crowded machine.
  do {
    std::this_thread::sleep_for(100ms);
  } while (std::chrono::steady_clock::now() - start < 500ms ||
           (kernel_usage(leaf_rel) < 0.2 &&
            std::chrono::steady_clock::now() - start < 5s));
  // Frozen values make the comparison exact.
  ASSERT_EQ(::kill(child, SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status));
  const double wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  PodInfo info;
  info.uid = uid;
  info.name = "trainscope-test-burner";
  info.namespace_name = "trainscope-test";
  info.containers.push_back(ContainerInfo{"burner", id, "containerd"});
  CgroupCollector collector(host_);
  Snapshot snap;
  const auto st = collector.Collect(
      CollectContext{host_, std::make_shared<const PodList>(PodList{info})},
      snap);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(snap.pod_samples.count(uid), 1u);
  const PodSample& pod = snap.pod_samples.at(uid);
  EXPECT_EQ(pod.cgroup_path, pod_rel.string());
  ASSERT_EQ(pod.containers.size(), 1u);
  const ContainerSample& c = pod.containers[0];
  EXPECT_EQ(c.name, "burner");
  EXPECT_EQ(c.cgroup_path, leaf_rel.string());
  EXPECT_NE(std::find(pod.pids.begin(), pod.pids.end(), child), pod.pids.end());

  for (const auto& [rel, sample] :
       {std::pair{leaf_rel, &c.cgroup}, std::pair{pod_rel, &pod.cgroup}}) {
    ASSERT_TRUE(sample->cpu.usage_seconds) << rel;
    EXPECT_NEAR(*sample->cpu.usage_seconds, kernel_usage(rel), 1e-6) << rel;
    // It really ran, and the 0.5-core quota held it back. A window of wall
    // time can hold a full quota (50 ms) from a period it only touches at
    // each end, so the bound is half the wall time plus two quotas (CI saw
    // 0.3008 s in 0.501 s). One core unthrottled would burn the whole wall.
    EXPECT_GT(*sample->cpu.usage_seconds, 0.1) << rel;
    EXPECT_LT(*sample->cpu.usage_seconds, 0.5 * wall_seconds + 0.1) << rel;
    ASSERT_TRUE(sample->cpu.periods) << rel;
    EXPECT_GT(*sample->cpu.periods, 0u) << rel;
  }
  if (const auto dir = V1Dir("cpuacct", leaf_rel); dir && v2_usage) {
    // Both kernels' views agree within 5%.
    EXPECT_NEAR(*c.cgroup.cpu.usage_seconds,
                ReadUint(*dir / "cpuacct.usage") / 1e9,
                0.05 * *c.cgroup.cpu.usage_seconds);
  }
  ASSERT_TRUE(c.cgroup.cpu.limit_cores);
  EXPECT_DOUBLE_EQ(*c.cgroup.cpu.limit_cores, 0.5);
  ASSERT_TRUE(pod.cgroup.cpu.limit_cores);
  EXPECT_DOUBLE_EQ(*pod.cgroup.cpu.limit_cores, 1.0);

  // PSI lives only in the unified tree; a stopped task adds no stall time.
  if (hierarchies_.unified &&
      fs::exists(*hierarchies_.unified / leaf_rel / "cpu.pressure")) {
    const auto text =
        ReadSmallFile(*hierarchies_.unified / leaf_rel / "cpu.pressure");
    const auto kernel = text ? cgroup::ParsePressure(*text) : std::nullopt;
    ASSERT_TRUE(kernel && kernel->some_seconds);
    ASSERT_TRUE(c.cgroup.cpu_pressure.some_seconds);
    EXPECT_NEAR(*c.cgroup.cpu_pressure.some_seconds, *kernel->some_seconds,
                1e-3);
  }
  // IO counters exist wherever blkio or io.stat does (zero is fine here).
  if (hierarchies_.v1.count("blkio") != 0) {
    EXPECT_TRUE(c.cgroup.io.read_bytes.has_value());
    EXPECT_TRUE(pod.cgroup.io.write_bytes.has_value());
  }

  // Memory: limit and working set (usage - inactive_file) as the kernel has
  // them.
  ASSERT_TRUE(c.cgroup.memory.limit_bytes);
  EXPECT_EQ(*c.cgroup.memory.limit_bytes, kContainerMemoryLimit);
  ASSERT_TRUE(pod.cgroup.memory.limit_bytes);
  EXPECT_EQ(*pod.cgroup.memory.limit_bytes, kPodMemoryLimit);
  for (const auto& [rel, sample] :
       {std::pair{leaf_rel, &c.cgroup}, std::pair{pod_rel, &pod.cgroup}}) {
    uint64_t usage, inactive;
    if (v2_memory) {
      const auto dir = *hierarchies_.unified / rel;
      usage = ReadUint(dir / "memory.current");
      inactive = ReadKey(dir / "memory.stat", "inactive_file");
    } else {
      const auto dir = *V1Dir("memory", rel);
      usage = ReadUint(dir / "memory.usage_in_bytes");
      inactive = ReadKey(dir / "memory.stat", "total_inactive_file");
    }
    const uint64_t kernel_ws = usage > inactive ? usage - inactive : 0;
    ASSERT_TRUE(sample->memory.working_set_bytes) << rel;
    EXPECT_NEAR(static_cast<double>(*sample->memory.working_set_bytes),
                static_cast<double>(kernel_ws), 0.05 * kernel_ws)
        << rel;
    EXPECT_GE(*sample->memory.working_set_bytes, kTouchedBytes / 2) << rel;
    EXPECT_LE(*sample->memory.working_set_bytes, kContainerMemoryLimit) << rel;
  }
}

// The collector keeps cgroup and /proc files open between cycles and reads
// them again with pread: each cycle must still see the kernel's current
// values, and a removed pod must be noticed and its files closed.
TEST_F(CgroupKernelTest, KeptFilesFollowTheKernelAndCloseWithTheirPod) {
  const std::string uid = RandomUid();
  const std::string id = RandomHex(64);
  const auto [pod_rel, leaf_rel] = MakePodCgroup(uid, id);
  ASSERT_FALSE(HasFailure());
  const auto roots = Roots();
  const pid_t child = sandbox_->StartBusyChild();
  ASSERT_GT(child, 0);
  for (const auto& root : roots) {
    ASSERT_TRUE(
        WriteFile(root / leaf_rel / "cgroup.procs", std::to_string(child)));
  }
  PodInfo info;
  info.uid = uid;
  info.name = "trainscope-test-kept";
  info.namespace_name = "trainscope-test";
  info.containers.push_back(ContainerInfo{"burner", id, "containerd"});
  const CollectContext ctx{host_,
                           std::make_shared<const PodList>(PodList{info})};

  sandbox_->Go();  // closes the go pipe: counted after
  const size_t fds_before = OpenFds();
  CgroupCollector collector(host_);
  const auto collect = [&]() -> std::optional<PodSample> {
    Snapshot snap;
    const auto st = collector.Collect(ctx, snap);
    EXPECT_TRUE(st.ok()) << st.message();
    const auto it = snap.pod_samples.find(uid);
    if (it == snap.pod_samples.end()) return std::nullopt;
    return it->second;
  };

  std::this_thread::sleep_for(200ms);
  const auto running = collect();
  ASSERT_TRUE(running && running->cgroup.cpu.usage_seconds);
  ASSERT_TRUE(running->processes);
  EXPECT_EQ(running->processes->running, 1u);
  EXPECT_GT(OpenFds(), fds_before + 5) << "no file was kept open";

  std::this_thread::sleep_for(300ms);
  ASSERT_EQ(::kill(child, SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
  const auto stopped = collect();
  ASSERT_TRUE(stopped && stopped->cgroup.cpu.usage_seconds);
  // Read again, not remembered: the CPU it burnt since, and its new state.
  EXPECT_GT(*stopped->cgroup.cpu.usage_seconds,
            *running->cgroup.cpu.usage_seconds + 0.05);
  ASSERT_TRUE(stopped->processes);
  EXPECT_EQ(stopped->processes->stopped, 1u);
  EXPECT_EQ(stopped->processes->running, 0u);

  sandbox_->Cleanup();  // kills the child, removes the cgroups
  EXPECT_FALSE(collect()) << "a removed pod still reported";
  // Its directory and files are closed once a cycle finds it gone.
  EXPECT_FALSE(collect());
  EXPECT_EQ(OpenFds(), fds_before);
}

TEST_F(CgroupKernelTest, CleanupRemovesOnlyWhatItCreated) {
  const fs::path rel =
      fs::path("kubepods.slice") / "kubepods-besteffort.slice" /
      ("kubepods-besteffort-pod" + RandomHex(8) + "_" + RandomHex(4) + "_4" +
       RandomHex(3) + "_a" + RandomHex(3) + "_" + RandomHex(12) + ".slice");
  const auto root = Roots().front();
  const bool kubepods_existed = fs::exists(root / "kubepods.slice");
  ASSERT_TRUE(sandbox_->MakeDirs(root, rel));
  ASSERT_TRUE(fs::is_directory(root / rel));
  sandbox_->Cleanup();
  EXPECT_FALSE(fs::exists(root / rel));
  // What existed before is kept; what the test made is gone.
  EXPECT_EQ(fs::exists(root / "kubepods.slice"), kubepods_existed);
}

}  // namespace
}  // namespace trainscope
