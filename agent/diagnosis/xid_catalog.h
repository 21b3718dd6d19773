#pragma once

#include <string_view>

namespace trainscope::diagnosis {

// What an Xid says about a training job, from NVIDIA's Xid catalog
// (docs.nvidia.com/deploy/xid-errors, the driver's nverror.h). The one
// table behind gpu_error's severity, evidence and advice.
enum class XidClass {
  // The GPU, its memory, its bus or its firmware failed: the job cannot
  // go on on that GPU until it is reset (or the node drained, the board
  // replaced).
  kHardware,
  // Usually the application's own fault (an illegal address, a kernel that
  // hung, a process killed after an earlier error): the GPU itself is fine.
  kApplication,
  // A code this table does not know.
  kUnknown,
};

struct XidMeaning {
  XidClass cls = XidClass::kUnknown;
  std::string_view words = "unknown Xid";  // a short phrase a person reads
};

XidMeaning MeaningOfXid(unsigned long long xid);
std::string_view XidClassName(XidClass cls);

}  // namespace trainscope::diagnosis
