// Symbolization of a process with about 100 mapped shared libraries: a
// child dlopens them and waits; the bench captures its maps (reading every
// library's ELF symbols: the first, uncached time), resolves a 60 s, 99 Hz,
// 2-CPU profile's worth of addresses (12,000 stacks of 16 frames), then
// does both again with the cache warm. Prints one JSON line.
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "profiler/proc_maps.h"
#include "profiler/symbolizer.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace tp = trainscope::profiler;

int LoadLibraries(int want) {
  int loaded = 0;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/usr/lib/x86_64-linux-gnu", ec)) {
    if (loaded >= want) break;
    const std::string name = entry.path().filename().string();
    if (name.find(".so.") == std::string::npos || entry.is_symlink()) continue;
    if (dlopen(entry.path().c_str(), RTLD_LAZY | RTLD_LOCAL)) ++loaded;
  }
  return loaded;
}

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

int main() {
  int ready[2];
  if (pipe(ready) != 0) return 1;
  const pid_t child = fork();
  if (child == 0) {
    int n = LoadLibraries(100);
    if (write(ready[1], &n, sizeof n) != sizeof n) _exit(1);
    pause();
    _exit(0);
  }
  int libraries = 0;
  if (read(ready[0], &libraries, sizeof libraries) != sizeof libraries)
    return 1;

  tp::Symbolizer symbolizer({});
  const uint32_t pid = static_cast<uint32_t>(child);
  auto t0 = Clock::now();
  symbolizer.CaptureMaps(pid);
  const double capture_cold = Seconds(Clock::now() - t0);

  // Addresses inside the child's executable mappings.
  std::vector<tp::MapEntry> exec;
  {
    FILE* f =
        std::fopen(("/proc/" + std::to_string(pid) + "/maps").c_str(), "r");
    std::string text;
    char buf[4096];
    size_t n;
    while (f && (n = std::fread(buf, 1, sizeof buf, f)) > 0)
      text.append(buf, n);
    if (f) std::fclose(f);
    for (auto& m : tp::ParseProcMaps(text)) {
      if (m.executable && tp::IsFileBacked(m)) exec.push_back(m);
    }
  }
  std::mt19937_64 rng(1);
  std::vector<std::vector<uint64_t>> stacks(12000);
  for (auto& s : stacks) {
    for (int i = 0; i < 16; ++i) {
      const auto& m = exec[rng() % exec.size()];
      s.push_back(m.start + rng() % (m.end - m.start));
    }
  }
  auto resolve = [&] {
    size_t resolved = 0;
    for (const auto& s : stacks) {
      for (const auto& f : symbolizer.SymbolizeUser(pid, s))
        resolved += f.resolved;
    }
    return resolved;
  };
  t0 = Clock::now();
  const size_t resolved = resolve();
  const double resolve_cold = Seconds(Clock::now() - t0);

  t0 = Clock::now();
  symbolizer.CaptureMaps(pid);
  const double capture_warm = Seconds(Clock::now() - t0);
  t0 = Clock::now();
  resolve();
  const double resolve_warm = Seconds(Clock::now() - t0);
  const auto stats = symbolizer.stats();

  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  std::printf(
      "{\"libraries\": %d, \"executable_mappings\": %zu, \"frames\": %zu, "
      "\"resolved\": %zu, \"first_capture_s\": %.3f, \"first_resolve_s\": "
      "%.3f, \"first_total_s\": %.3f, \"cached_capture_s\": %.4f, "
      "\"cached_resolve_s\": %.3f, \"files_loaded\": %llu, "
      "\"symbol_cache_bytes\": %zu}\n",
      libraries, exec.size(), stacks.size() * 16, resolved, capture_cold,
      resolve_cold, capture_cold + resolve_cold, capture_warm, resolve_warm,
      static_cast<unsigned long long>(stats.files_loaded), stats.bytes_cached);
  return 0;
}
