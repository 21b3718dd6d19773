#pragma once

// What every BPF collector (flows, profiler) needs around libbpf: its
// diagnostics in our log, and errno texts that say which capability an
// operation lacks. Header-only: the collectors share no library otherwise.

#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace trainscope::bpf {

// libbpf's own diagnostics (verifier log, missing BTF) at debug level; the
// error that matters is returned by the caller with context. libbpf has one
// print hook per process, shared by every BPF collector.
inline int LibbpfPrint(enum libbpf_print_level level, const char* fmt,
                       va_list ap) {
  if (level == LIBBPF_DEBUG) return 0;
  char buf[1024];
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  std::string line(buf);
  while (!line.empty() && line.back() == '\n') line.pop_back();
  spdlog::debug("[libbpf] {}", line);
  return n;
}

// strerror of a positive or negative errno; for EPERM and EACCES, `needs`
// (what the operation takes, e.g. "CAP_BPF+CAP_PERFMON") is added.
inline std::string ErrnoText(int err, std::string_view needs) {
  if (err < 0) err = -err;
  std::string text = std::strerror(err);
  if (err == EPERM || err == EACCES) {
    text += " (needs ";
    text += needs;
    text += ")";
  }
  return text;
}

}  // namespace trainscope::bpf
