#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "flows/flow_record.h"

namespace trainscope {

// Link types we decode (values of pcap's DLT_*, which equal LINKTYPE_* for
// these, except DLT_RAW which Linux reports as 12 and files may carry as 101).
enum LinkType : int {
  kLinkEthernet = 1,    // DLT_EN10MB (also what Linux "lo" captures give)
  kLinkRaw = 12,        // DLT_RAW on Linux
  kLinkRawAlt = 14,     // DLT_RAW on some BSDs
  kLinkRawFile = 101,   // LINKTYPE_RAW
  kLinkLinuxSll = 113,  // DLT_LINUX_SLL ("any", libpcap < 1.10 default)
  kLinkLinuxSll2 = 276  // DLT_LINUX_SLL2 ("any", carries the ifindex)
};

// One captured packet, decoded from the headers only (the capture may be
// truncated: lengths come from the wire length, never the captured length).
struct ParsedPacket {
  IpAddress src;
  IpAddress dst;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint8_t protocol = 0;
  uint32_t frame_bytes = 0;  // pcap_pkthdr.len, link header included
  uint32_t ip_bytes = 0;     // frame_bytes minus the link header
  uint32_t payload_bytes = 0;
  int ifindex = -1;  // DLT_LINUX_SLL2 only
  // Linux packet type (SLL/SLL2): 0 to us, 4 outgoing, ...; -1 unknown.
  int packet_type = -1;
  double timestamp_s = 0;  // capture time (pcap_pkthdr.ts); 0 when unknown
};

// Decodes IPv4/IPv6 and TCP/UDP ports. Empty for non-IP frames or headers
// cut short by the snap length.
std::optional<ParsedPacket> ParsePacket(int link_type, const uint8_t* data,
                                        size_t caplen, uint32_t wire_len);

}  // namespace trainscope
