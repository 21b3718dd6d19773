#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trainscope::profiler {

// One symbolized stack frame.
struct Frame {
  std::string function;  // demangled; "module+0xOFF" when unresolved
  std::string module;    // file base name, "[kernel]" or "[unknown]"
  uint64_t address = 0;  // runtime address
  bool kernel = false;
  bool resolved = false;
};

// One stack with its value and who it belongs to.
struct ProfileSample {
  std::vector<Frame> frames;  // leaf first (kernel frames above user ones)
  int64_t value = 0;          // samples (cpu) or nanoseconds (off-CPU)
  int64_t nanoseconds = 0;    // time this sample stands for
  // container, thread, role, pod, namespace, state (off-CPU: runnable or
  // blocked).
  std::map<std::string, std::string> labels;
  int64_t pid = 0;
  int64_t tid = 0;
};

// A finished profile, symbolized, ready for pprof / folded / SVG.
struct Profile {
  std::string type;        // "cpu" or "offcpu"
  std::string value_type;  // "samples" or "offcpu" (nanoseconds)
  std::string value_unit;  // "count" or "nanoseconds"
  int64_t period_ns = 0;   // cpu: nanoseconds one sample stands for
  int hz = 0;
  int64_t start_unix_ns = 0;
  int64_t duration_ns = 0;
  std::vector<ProfileSample> samples;
  // What a reader should know: the pod exited, stacks were lost...
  std::vector<std::string> comments;
};

}  // namespace trainscope::profiler
