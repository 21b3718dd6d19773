#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "wire.h"

namespace trainsim {

// The cooperative half of the hang and checkpoint faults (docs/trainsim.md
// "Hangs"): trainsim writes one line to a pod's fault file, and the pod's
// training thread reads it at each step boundary and does what it says, as
// the real failure would. The same file and format serve the built-in pods
// (FaultGate) and the real programs (TRAINSIM_FAULT_FILE, read by
// bench/workloads/steps.py).
//
// The line: `<id> <action> [<arg>]`, id a number unique in the run.
//   busy_loop            spin on the CPU while the line stays
//   all_wait             sleep (no CPU) while the line stays
//   blocked_io <path>    read() <path> (on a hung FUSE mount) until it fails
//   checkpoint <bytes> <path>  write <bytes> to <path>, fsync, delete; once
//   oom <cap_bytes>      allocate and touch memory until the kernel's
//                        cgroup OOM killer kills the process (giving up
//                        at cap_bytes, should no limit stop it)
// No file, or a new line, ends a hang.
struct FaultOrder {
  long id = 0;  // 0: none
  std::string action;
  std::string arg;
  std::string path;  // checkpoint's file
};

std::string FaultFilePath(const std::string& run_id, const std::string& pod);
// Written aside and renamed, so a reader never sees half a line.
void WriteFaultFile(const std::string& path, const FaultOrder& order);
void RemoveFaultFile(const std::string& path);
// Pure: the line's fields (id 0 when the line is malformed).
FaultOrder ParseFaultLine(const std::string& line);

// In a built-in pod: AtStepBoundary blocks, spins or writes as the file
// says. Thread-safe: of several serving threads (a PS) one carries out a
// hang and the others wait on it, asleep, as threads queued behind a
// stuck one do.
class FaultGate {
 public:
  explicit FaultGate(std::string path) : path_(std::move(path)) {}
  void AtStepBoundary(const StopState& stop);

 private:
  FaultOrder Read();
  void Hang(const FaultOrder& order, const StopState& stop);
  bool Still(long id, const StopState& stop);

  const std::string path_;
  std::mutex mu_;  // held while a hang or checkpoint runs
  std::chrono::steady_clock::time_point next_check_{};
  std::set<long> done_;  // checkpoints written
};

// Blocks in read() of `path`, on a hung filesystem: after the read began, a
// signal to the reading thread turns FUSE's interruptible wait into the
// killable one (state D), as a hard NFS mount shows. Returns when the read
// fails (the mount aborted) or after `give_up` without the file.
void ReadHungFile(const std::string& path, const StopState& stop);
// Allocates memory in 16 MiB chunks, touching every page so it is
// charged to the cgroup, until the process is killed; past `cap_bytes`
// (no limit enforced) it holds what it has while `still()` and then frees
// it, so a broken limit cannot take the host's memory.
void AllocateUntilKilled(uint64_t cap_bytes,
                         const std::function<bool()>& still);
// Writes `bytes` (rounded up to 1 MiB) to `path` in 1 MiB O_DIRECT
// write()s, fsyncs, deletes it.
void WriteCheckpoint(const std::string& path, uint64_t bytes,
                     const StopState& stop);

}  // namespace trainsim
