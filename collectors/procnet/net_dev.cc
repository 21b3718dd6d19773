#include "procnet/net_dev.h"

#include <charconv>
#include <cstdint>

namespace trainscope {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Splits the numeric part into exactly `want` unsigned fields.
bool ParseFields(std::string_view s, uint64_t* fields, size_t want) {
  size_t got = 0;
  while (got < want) {
    s = Trim(s);
    if (s.empty()) return false;
    auto [ptr, ec] =
        std::from_chars(s.data(), s.data() + s.size(), fields[got]);
    if (ec != std::errc()) return false;
    s.remove_prefix(static_cast<size_t>(ptr - s.data()));
    if (!s.empty() && s.front() != ' ' && s.front() != '\t') return false;
    ++got;
  }
  return true;
}

}  // namespace

std::vector<NetDevLine> ParseNetDev(std::string_view text) {
  std::vector<NetDevLine> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.find('|') != std::string_view::npos) continue;  // headers
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = Trim(line.substr(0, colon));
    if (name.empty()) continue;
    // rx: bytes packets errs drop fifo frame compressed multicast
    // tx: bytes packets errs drop fifo colls carrier compressed
    uint64_t f[16];
    if (!ParseFields(line.substr(colon + 1), f, 16)) continue;
    NetDevLine entry;
    entry.device = std::string(name);
    entry.counters.receive_bytes = f[0];
    entry.counters.receive_packets = f[1];
    entry.counters.receive_errors = f[2];
    entry.counters.receive_drops = f[3];
    entry.counters.transmit_bytes = f[8];
    entry.counters.transmit_packets = f[9];
    entry.counters.transmit_errors = f[10];
    entry.counters.transmit_drops = f[11];
    out.push_back(std::move(entry));
  }
  return out;
}

NetDevCounters SumExceptLoopback(const std::vector<NetDevLine>& lines) {
  NetDevCounters sum;
  for (const auto& line : lines) {
    if (line.device == "lo") continue;
    const auto& c = line.counters;
    sum.receive_bytes += c.receive_bytes;
    sum.receive_packets += c.receive_packets;
    sum.receive_errors += c.receive_errors;
    sum.receive_drops += c.receive_drops;
    sum.transmit_bytes += c.transmit_bytes;
    sum.transmit_packets += c.transmit_packets;
    sum.transmit_errors += c.transmit_errors;
    sum.transmit_drops += c.transmit_drops;
  }
  return sum;
}

}  // namespace trainscope
