// Parsers on realistic inputs: what one sampling cycle does per pod.
#include <benchmark/benchmark.h>

#include <string>

#include "cgroup/cgroup_parse.h"
#include "discovery/pod_json.h"
#include "node/node_parse.h"
#include "procnet/net_dev.h"
#include "trainscope/file_util.h"

namespace trainscope {
namespace {

// A v2 memory.stat as a 6.x kernel writes it (about 40 keys).
std::string MemoryStat() {
  const char* keys[] = {"anon",
                        "file",
                        "kernel",
                        "kernel_stack",
                        "pagetables",
                        "sec_pagetables",
                        "percpu",
                        "sock",
                        "vmalloc",
                        "shmem",
                        "zswap",
                        "zswapped",
                        "file_mapped",
                        "file_dirty",
                        "file_writeback",
                        "swapcached",
                        "anon_thp",
                        "file_thp",
                        "shmem_thp",
                        "inactive_anon",
                        "active_anon",
                        "inactive_file",
                        "active_file",
                        "unevictable",
                        "slab_reclaimable",
                        "slab_unreclaimable",
                        "slab",
                        "workingset_refault_anon",
                        "workingset_refault_file",
                        "workingset_activate_anon",
                        "workingset_activate_file",
                        "workingset_restore_anon",
                        "workingset_restore_file",
                        "workingset_nodereclaim",
                        "pgscan",
                        "pgsteal",
                        "pgscan_kswapd",
                        "pgscan_direct",
                        "pgsteal_kswapd",
                        "pgsteal_direct",
                        "pgfault",
                        "pgmajfault",
                        "pgrefill",
                        "pgactivate",
                        "pgdeactivate",
                        "pglazyfree",
                        "pglazyfreed",
                        "thp_fault_alloc",
                        "thp_collapse_alloc"};
  std::string out;
  uint64_t v = 123456789;
  for (const char* k : keys)
    out += std::string(k) + " " + std::to_string(v += 4096) + "\n";
  return out;
}

// io.stat of a node with many block devices (NVMe namespaces, dm, loop).
std::string IoStat(int devices) {
  std::string out;
  for (int i = 0; i < devices; ++i) {
    out += "259:" + std::to_string(i) +
           " rbytes=" + std::to_string(1000000 * i) +
           " wbytes=" + std::to_string(2000000 * i) +
           " rios=1234 wios=5678 dbytes=0 dios=0\n";
  }
  return out;
}

std::string NetDev(int interfaces) {
  std::string out =
      "Inter-|   Receive                                                |  "
      "Transmit\n face |bytes    packets errs drop fifo frame compressed "
      "multicast|bytes    packets errs drop fifo colls carrier compressed\n";
  for (int i = 0; i < interfaces; ++i) {
    out += "  veth" + std::to_string(i) +
           ": 49766989    1202    0    0    0     0          0         0 "
           "   49085     593    0    0    0     0       0          0\n";
  }
  return out;
}

void BM_CgroupMemoryStat(benchmark::State& state) {
  const std::string text = MemoryStat();
  for (auto _ : state) {
    benchmark::DoNotOptimize(cgroup::FlatKeyedValue(text, "inactive_file"));
    benchmark::DoNotOptimize(cgroup::FlatKeyedValue(text, "anon"));
  }
}
BENCHMARK(BM_CgroupMemoryStat);

void BM_CgroupCpuStatAndPressure(benchmark::State& state) {
  const std::string cpu_stat =
      "usage_usec 1234567890\nuser_usec 1000000000\nsystem_usec 234567890\n"
      "core_sched.force_idle_usec 0\nnr_periods 123456\nnr_throttled 2345\n"
      "throttled_usec 98765432\nnr_bursts 0\nburst_usec 0\n";
  const std::string pressure =
      "some avg10=1.23 avg60=0.98 avg300=0.50 total=123456789\n"
      "full avg10=0.10 avg60=0.05 avg300=0.01 total=2345678\n";
  for (auto _ : state) {
    benchmark::DoNotOptimize(cgroup::FlatKeyedValue(cpu_stat, "usage_usec"));
    benchmark::DoNotOptimize(cgroup::FlatKeyedValue(cpu_stat, "nr_throttled"));
    benchmark::DoNotOptimize(cgroup::ParsePressure(pressure));
  }
}
BENCHMARK(BM_CgroupCpuStatAndPressure);

void BM_CgroupIoStat(benchmark::State& state) {
  const std::string text = IoStat(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(cgroup::ParseIoStat(text));
}
BENCHMARK(BM_CgroupIoStat)->Arg(4)->Arg(64);

void BM_ProcNetDev(benchmark::State& state) {
  const std::string text = NetDev(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(SumExceptLoopback(ParseNetDev(text)));
  }
}
BENCHMARK(BM_ProcNetDev)->Arg(3)->Arg(120);

void BM_ProcStat(benchmark::State& state) {
  std::string text = "cpu  123456 789 34567 9876543 2345 0 678 90 0 0\n";
  for (int i = 0; i < 64; ++i) {
    text += "cpu" + std::to_string(i) + " 1929 12 540 154321 36 0 10 1 0 0\n";
  }
  text += "intr 123456789 1 2 3\nctxt 987654321\nbtime 1763700000\n";
  for (auto _ : state) benchmark::DoNotOptimize(ParseProcStat(text, 100));
}
BENCHMARK(BM_ProcStat);

// The kubelet's default pod limit, as the API server returns it.
void BM_PodListJson110(benchmark::State& state) {
  auto text = ReadSmallFile(TRAINSCOPE_BENCH_PODLIST);
  if (!text) {
    state.SkipWithError("missing pod list fixture");
    return;
  }
  for (auto _ : state) {
    PodList pods;
    std::string rv;
    benchmark::DoNotOptimize(ParsePodList(*text, &pods, &rv));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text->size()));
}
BENCHMARK(BM_PodListJson110);

}  // namespace
}  // namespace trainscope
