#include "profiler/profile_builder.h"

#include "profiler.h"

namespace trainscope::profiler {
namespace {

Frame Marker(const std::string& name) {
  Frame f;
  f.function = name;
  f.module = name;
  return f;
}

const char* StateName(int kind) {
  switch (kind) {
    case PROFILER_OFF_CPU_RUNNABLE:
      return "runnable";
    case PROFILER_OFF_CPU_BLOCKED:
      return "blocked";
    default:
      return "";
  }
}

// An off-CPU stack is taken inside the sched_switch tracepoint: its
// leaf-most kernel frames are the tracing machinery running the profiler
// (bpf_trace_run*, the program itself), not the task. They are dropped.
void TrimTracingFrames(std::vector<Frame>* kernel) {
  for (size_t i = 0; i < kernel->size(); ++i) {
    const std::string& name = (*kernel)[i].function;
    if (name.rfind("bpf_trace_run", 0) == 0 ||
        name.rfind("__bpf_trace_", 0) == 0 ||
        name.rfind("__traceiter_", 0) == 0) {
      kernel->erase(kernel->begin(), kernel->begin() + i + 1);
      return;
    }
  }
}

}  // namespace

void AddSamples(const std::vector<RawStackCount>& raws, const PodInfo& pod,
                const std::map<uint64_t, std::string>& container_of,
                Symbolizer& symbolizer, Profile* profile) {
  const bool cpu = profile->type == "cpu";
  uint64_t truncated = 0, lost = 0;
  for (const RawStackCount& raw : raws) {
    ProfileSample s;
    s.pid = raw.tgid;
    s.tid = raw.pid;
    s.value = static_cast<int64_t>(raw.value);
    s.nanoseconds = cpu ? s.value * profile->period_ns : s.value;
    s.frames = symbolizer.SymbolizeKernel(raw.kernel_stack);
    if (!cpu) TrimTracingFrames(&s.frames);
    auto user = symbolizer.SymbolizeUser(raw.tgid, raw.user_stack);
    s.frames.insert(s.frames.end(), user.begin(), user.end());
    // The walk stopped at the depth limit: the root of this stack is
    // missing, and the marker says so instead of inventing a root.
    if (raw.user_stack.size() >= PROFILER_MAX_STACK_DEPTH) {
      s.frames.push_back(Marker("[truncated]"));
      ++truncated;
    }
    if (raw.user_stack.empty() && raw.kernel_stack.empty()) {
      s.frames.push_back(
          Marker(raw.user_stack_lost ? "[stack lost]" : "[no stack]"));
      if (raw.user_stack_lost) ++lost;
    }
    auto container = container_of.find(raw.cgroup_id);
    s.labels = {
        {"namespace", pod.namespace_name},
        {"pod", pod.name},
        {"container",
         container == container_of.end() ? std::string() : container->second},
        {"thread", raw.comm},
        {"role", std::string(RoleName(pod.role))},
        {"state", StateName(raw.kind)},
    };
    profile->samples.push_back(std::move(s));
  }
  if (truncated) {
    profile->comments.push_back(std::to_string(truncated) +
                                " stacks reached the 127-frame limit "
                                "([truncated] marks their missing root)");
  }
  if (lost) {
    profile->comments.push_back(std::to_string(lost) +
                                " stacks did not fit the stack map "
                                "([stack lost])");
  }
}

}  // namespace trainscope::profiler
