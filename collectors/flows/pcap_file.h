#pragma once

// Reading a capture file (pcap or pcapng, as tcpdump -w writes it) into the
// per-conversation table of `trainscope flows --read`.

#include <cstdint>
#include <cstdio>
#include <string>

#include "flows/pcap_flows.h"
#include "trainscope/status.h"

namespace trainscope {

struct CaptureSummary {
  ConversationTable conversations;
  uint64_t packets = 0;
  uint64_t packets_not_ip = 0;  // not IPv4/IPv6, or cut short
};

// `file` is closed in every case. The error names the file's problem
// (libpcap's words) and keeps the packets read before it.
Status ReadCaptureFile(std::FILE* file, CaptureSummary* out);
Status ReadCaptureFile(const std::string& path, CaptureSummary* out);

}  // namespace trainscope
