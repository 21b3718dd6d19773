// cgroup v1 and v2 interface files: every parser of collectors/cgroup over
// the same bytes (a hostile or half-written file reaches all of them).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cgroup/cgroup_parse.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainscope::cgroup;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseUint(text);
  for (const char* key : {"usage_usec", "nr_throttled", "throttled_usec",
                          "anon", "file", "oom_kill", "max"}) {
    (void)FlatKeyedValue(text, key);
  }
  if (auto bw = ParseCpuMax(text)) (void)bw->cores();
  (void)ParseMemoryMax(text);
  (void)ParseMemoryLimitInBytes(text);
  (void)ParseIoStat(text);
  (void)ParseBlkioServiceBytes(text);
  (void)ParsePressure(text);
  (void)ParseCgroupProcs(text);
  // v1's quota and period come from two files.
  trainscope::fuzz::FuzzInput input(data, size);
  const std::string_view quota = input.Line();
  if (auto bw = ParseCfsBandwidth(quota, input.Rest())) (void)bw->cores();
  return 0;
}
