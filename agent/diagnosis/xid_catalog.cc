#include "diagnosis/xid_catalog.h"

#include <array>
#include <utility>

namespace trainscope::diagnosis {
namespace {

struct Entry {
  unsigned long long xid;
  XidMeaning meaning;
};

// The Xids a training fleet meets, by NVIDIA's resolution buckets: those
// whose immediate action is a GPU reset, a node reboot or a support case are
// hardware; those where restarting the application suffices are the
// application's. Codes outside the table are reported as unknown.
constexpr auto kCatalog = std::to_array<Entry>({
    {13, {XidClass::kApplication, "graphics engine exception"}},
    {31, {XidClass::kApplication, "GPU memory page fault"}},
    {32, {XidClass::kApplication, "invalid or corrupted push buffer stream"}},
    {43, {XidClass::kApplication, "GPU stopped processing (channel reset)"}},
    {45, {XidClass::kApplication, "preemptive cleanup after an earlier error"}},
    {48, {XidClass::kHardware, "double-bit ECC error"}},
    {61, {XidClass::kHardware, "internal micro-controller breakpoint"}},
    {62, {XidClass::kHardware, "internal micro-controller halt"}},
    {63, {XidClass::kHardware, "row remapping pending (ECC page retirement)"}},
    {64, {XidClass::kHardware, "row remapping failure (ECC page retirement)"}},
    {68, {XidClass::kApplication, "video decoder exception"}},
    {69, {XidClass::kApplication, "graphics engine class error"}},
    {74, {XidClass::kHardware, "NVLink error"}},
    {79, {XidClass::kHardware, "GPU has fallen off the bus"}},
    {92, {XidClass::kHardware, "high single-bit ECC error rate"}},
    {94, {XidClass::kHardware, "contained ECC error"}},
    {95, {XidClass::kHardware, "uncontained ECC error"}},
    {109, {XidClass::kApplication, "context switch timeout"}},
    {119, {XidClass::kHardware, "GSP RPC timeout"}},
    {120, {XidClass::kHardware, "GSP error"}},
    {140, {XidClass::kHardware, "unrecovered ECC error"}},
    {143, {XidClass::kHardware, "GPU initialization failure"}},
    {154, {XidClass::kHardware, "GPU recovery action changed (reset needed)"}},
});

}  // namespace

XidMeaning MeaningOfXid(unsigned long long xid) {
  for (const Entry& e : kCatalog) {
    if (e.xid == xid) return e.meaning;
  }
  return {};
}

std::string_view XidClassName(XidClass cls) {
  switch (cls) {
    case XidClass::kHardware:
      return "hardware";
    case XidClass::kApplication:
      return "application";
    case XidClass::kUnknown:
      return "unknown";
  }
  return "unknown";
}

}  // namespace trainscope::diagnosis
