#pragma once

#include <string>

#include "profiler/profile.h"

namespace trainscope::profiler {

// Gzipped pprof protobuf (profile.proto). Each distinct (module, function)
// is one Function and one Location per address; samples carry their labels
// and pid/tid as numeric labels.
std::string EncodePprofGzip(const Profile& profile);

// Folded stacks, one line per distinct stack: "root;...;leaf value". The
// first frame is the thread ("[thread <name>]"), off-CPU stacks get
// "[runnable]"/"[blocked]" after it. Lines sorted, values summed.
std::string FoldedStacks(const Profile& profile);

// A self-contained SVG flame graph of the folded stacks (hover shows the
// frame, its value and share). `title` names the profile.
std::string FlameGraphSvg(const std::string& folded, const std::string& title,
                          const std::string& unit);

// Gzip of arbitrary bytes (the pprof wire format is gzipped).
std::string Gzip(const std::string& bytes);

}  // namespace trainscope::profiler
