#include "flows/pcap_parse.h"

namespace trainscope {
namespace {

constexpr uint16_t kEthIpv4 = 0x0800;
constexpr uint16_t kEthIpv6 = 0x86dd;
constexpr uint16_t kEthVlan = 0x8100;
constexpr uint16_t kEthQinQ = 0x88a8;

uint16_t Be16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] << 8 | p[1]);
}
uint32_t Be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 |
         p[3];
}

// Ports and L4 header length; false when the header is cut off.
bool ParseL4(uint8_t proto, const uint8_t* p, size_t len, ParsedPacket& out,
             uint32_t* header) {
  *header = 0;
  if (proto == 6) {
    if (len < 13) return false;
    *header = static_cast<uint32_t>(p[12] >> 4) * 4;
  } else if (proto == 17) {
    if (len < 4) return false;
    *header = 8;
  } else {
    return true;  // no ports, still an IP packet worth counting
  }
  out.src_port = Be16(p);
  out.dst_port = Be16(p + 2);
  return true;
}

}  // namespace

std::optional<ParsedPacket> ParsePacket(int link_type, const uint8_t* data,
                                        size_t caplen, uint32_t wire_len) {
  ParsedPacket out;
  out.frame_bytes = wire_len;
  size_t off = 0;
  uint16_t ethertype = 0;
  switch (link_type) {
    case kLinkEthernet:
      if (caplen < 14) return std::nullopt;
      ethertype = Be16(data + 12);
      off = 14;
      while ((ethertype == kEthVlan || ethertype == kEthQinQ) &&
             caplen >= off + 4) {
        ethertype = Be16(data + off + 2);
        off += 4;
      }
      break;
    case kLinkLinuxSll:
      if (caplen < 16) return std::nullopt;
      out.packet_type = Be16(data);
      ethertype = Be16(data + 14);
      off = 16;
      break;
    case kLinkLinuxSll2:
      if (caplen < 20) return std::nullopt;
      ethertype = Be16(data);
      out.ifindex = static_cast<int>(Be32(data + 4));
      out.packet_type = data[10];
      off = 20;
      break;
    case kLinkRaw:
    case kLinkRawAlt:
    case kLinkRawFile:
      if (caplen < 1) return std::nullopt;
      ethertype = (data[0] >> 4) == 6 ? kEthIpv6 : kEthIpv4;
      break;
    default:
      return std::nullopt;
  }
  if (wire_len < off) return std::nullopt;
  out.ip_bytes = static_cast<uint32_t>(wire_len - off);
  const uint8_t* ip = data + off;
  const size_t avail = caplen - off;
  uint32_t ip_header = 0;
  uint32_t l4_header = 0;
  if (ethertype == kEthIpv4) {
    if (avail < 20 || (ip[0] >> 4) != 4) return std::nullopt;
    ip_header = static_cast<uint32_t>(ip[0] & 0x0f) * 4;
    if (ip_header < 20) return std::nullopt;
    out.protocol = ip[9];
    uint8_t a[4] = {ip[12], ip[13], ip[14], ip[15]};
    uint8_t b[4] = {ip[16], ip[17], ip[18], ip[19]};
    out.src = IpAddress::V4(a);
    out.dst = IpAddress::V4(b);
    const bool first_fragment = (Be16(ip + 6) & 0x1fff) == 0;
    if (first_fragment && avail >= ip_header &&
        !ParseL4(out.protocol, ip + ip_header, avail - ip_header, out,
                 &l4_header)) {
      return std::nullopt;
    }
  } else if (ethertype == kEthIpv6) {
    if (avail < 40 || (ip[0] >> 4) != 6) return std::nullopt;
    ip_header = 40;
    out.protocol = ip[6];
    out.src = IpAddress::V6(ip + 8);
    out.dst = IpAddress::V6(ip + 24);
    if (!ParseL4(out.protocol, ip + 40, avail - 40, out, &l4_header)) {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  const uint32_t headers = ip_header + l4_header;
  out.payload_bytes = out.ip_bytes > headers ? out.ip_bytes - headers : 0;
  return out;
}

}  // namespace trainscope
