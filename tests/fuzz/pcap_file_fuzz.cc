// `trainscope flows --read FILE`: a whole capture file (pcap or pcapng,
// libpcap's reader) through the conversation table.

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "flows/pcap_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainscope;
  if (size == 0) return 0;
  // fmemopen reads the buffer in place; libpcap never writes to it.
  std::FILE* file = fmemopen(const_cast<uint8_t*>(data), size, "rb");
  if (!file) return 0;
  CaptureSummary summary;
  (void)ReadCaptureFile(file, &summary);
  return 0;
}
