#include "flows/flow_record.h"

#include <arpa/inet.h>

#include <cstring>

namespace trainscope {

IpAddress IpAddress::V4(uint32_t network_order) {
  IpAddress a;
  a.bytes[10] = 0xff;
  a.bytes[11] = 0xff;
  std::memcpy(&a.bytes[12], &network_order, 4);
  return a;
}

IpAddress IpAddress::V4(const uint8_t (&octets)[4]) {
  uint32_t n;
  std::memcpy(&n, octets, 4);
  return V4(n);
}

IpAddress IpAddress::V6(const uint8_t* sixteen) {
  IpAddress a;
  std::memcpy(a.bytes.data(), sixteen, 16);
  return a;
}

std::optional<IpAddress> IpAddress::Parse(std::string_view text) {
  std::string s(text);
  in_addr v4{};
  if (::inet_pton(AF_INET, s.c_str(), &v4) == 1) return V4(v4.s_addr);
  in6_addr v6{};
  if (::inet_pton(AF_INET6, s.c_str(), &v6) == 1) return V6(v6.s6_addr);
  return std::nullopt;
}

bool IpAddress::is_v4() const {
  static const uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(bytes.data(), kPrefix, 12) == 0;
}

bool IpAddress::is_unspecified() const {
  for (uint8_t b : bytes) {
    if (b) return false;
  }
  return true;
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (is_v4()) {
    ::inet_ntop(AF_INET, &bytes[12], buf, sizeof buf);
  } else {
    ::inet_ntop(AF_INET6, bytes.data(), buf, sizeof buf);
  }
  return buf;
}

}  // namespace trainscope
