// Captured frames in pcap mode: the header decoder for every link type the
// agent captures with, then the offline conversation table and the live
// per-pod accounting (with exchange-burst tracking) that consume it.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "flows/pcap_flows.h"
#include "flows/pcap_parse.h"
#include "fuzz_input.h"

namespace {

constexpr int kLinkTypes[] = {
    trainscope::kLinkEthernet, trainscope::kLinkRaw,
    trainscope::kLinkRawAlt,   trainscope::kLinkRawFile,
    trainscope::kLinkLinuxSll, trainscope::kLinkLinuxSll2};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainscope;
  fuzz::FuzzInput input(data, size);
  const int link = kLinkTypes[input.Byte() % std::size(kLinkTypes)];
  // The wire length may exceed what was captured (a snap length), never
  // the reverse in a real capture; a file can claim anything.
  const uint32_t extra = input.Byte() * 97u;
  const bool shorter = input.Byte() & 1;
  const std::string_view frame = input.Rest();
  const auto caplen = static_cast<uint32_t>(frame.size());
  const uint32_t wire_len = shorter ? caplen / 2 : caplen + extra;
  const auto packet = ParsePacket(
      link, reinterpret_cast<const uint8_t*>(frame.data()), caplen, wire_len);
  if (!packet) return 0;
  if (packet->payload_bytes > packet->ip_bytes ||
      packet->ip_bytes > packet->frame_bytes) {
    std::abort();  // a byte count that cannot be: overflowed arithmetic
  }
  ConversationTable table;
  table.Add(*packet);
  PacketAccounting accounting(/*max_flows=*/16, /*burst_gap_s=*/0.05);
  accounting.SetLocalPods({{packet->src, "ns/pod"}});
  accounting.Add(*packet, /*ifindex=*/1);
  accounting.Add(*packet, /*ifindex=*/2);  // the same frame on the bridge
  (void)accounting.TakeDeltas();
  (void)accounting.TakeBursts(packet->timestamp_s + 1);
  return 0;
}
