#pragma once

#include <string>
#include <vector>

namespace trainsim {

// The blocked_io fault's storage (docs/trainsim.md "Hangs"): a FUSE file
// system that answers INIT, LOOKUP, GETATTR and OPEN but never READ, as a
// hung NFS or FUSE mount does. It speaks /dev/fuse directly (no libfuse).
// The file a rank reads.
inline constexpr const char* kHungFileName = "data";

// `trainsim __hungfs MOUNTPOINT`: mounts, serves until SIGTERM/SIGINT,
// then aborts its connection (every stuck read fails) and unmounts.
int RunHungFs(const std::string& mountpoint);

// Unmounts every FUSE mount at or under `dir`, aborting its connection first,
// so no process stays blocked on it. Returns what it could not unmount.
std::vector<std::string> ReleaseHungMounts(const std::string& dir);

}  // namespace trainsim
