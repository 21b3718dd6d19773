// /proc/<pid>/net/dev of a pod's network namespace.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "procnet/net_dev.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainscope;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)SumExceptLoopback(ParseNetDev(text));
  return 0;
}
