// trainscope flows --read FILE.pcap [--json]: the per-flow byte table of a
// capture (tcpdump -w on a node), counted the way the pcap collector counts:
// wire lengths from pcap_pkthdr.len, so a headers-only capture (-s 128)
// still gives exact bytes.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "flows/pcap_file.h"

namespace trainscope {
namespace {

std::string ProtocolName(uint8_t p) {
  if (p == 6) return "tcp";
  if (p == 17) return "udp";
  return std::to_string(p);
}

std::string Endpoint(const IpAddress& addr, uint16_t port, uint8_t proto) {
  std::string a = addr.is_v4() ? addr.ToString() : "[" + addr.ToString() + "]";
  if (proto != 6 && proto != 17) return a;
  return a + ":" + std::to_string(port);
}

nlohmann::json Json(const ConversationTable& table, uint64_t packets,
                    uint64_t skipped) {
  nlohmann::json flows = nlohmann::json::array();
  for (const auto& c : table.conversations()) {
    const auto& e = c.a_to_b;
    flows.push_back({{"protocol", ProtocolName(e.protocol)},
                     {"a", Endpoint(e.src, e.src_port, e.protocol)},
                     {"b", Endpoint(e.dst, e.dst_port, e.protocol)},
                     {"a_to_b",
                      {{"frames", c.frames_a_to_b},
                       {"bytes", c.frame_bytes_a_to_b},
                       {"ip_bytes", c.ip_bytes_a_to_b}}},
                     {"b_to_a",
                      {{"frames", c.frames_b_to_a},
                       {"bytes", c.frame_bytes_b_to_a},
                       {"ip_bytes", c.ip_bytes_b_to_a}}},
                     {"bytes", c.frame_bytes_a_to_b + c.frame_bytes_b_to_a}});
  }
  return {{"flows", flows}, {"packets", packets}, {"packets_not_ip", skipped}};
}

void PrintTable(const ConversationTable& table) {
  std::printf("%-5s %-46s %-46s %10s %14s %10s %14s %14s\n", "PROTO", "A", "B",
              "FRAMES>", "BYTES>", "FRAMES<", "BYTES<", "BYTES");
  for (const auto& c : table.conversations()) {
    const auto& e = c.a_to_b;
    std::printf("%-5s %-46s %-46s %10llu %14llu %10llu %14llu %14llu\n",
                ProtocolName(e.protocol).c_str(),
                Endpoint(e.src, e.src_port, e.protocol).c_str(),
                Endpoint(e.dst, e.dst_port, e.protocol).c_str(),
                static_cast<unsigned long long>(c.frames_a_to_b),
                static_cast<unsigned long long>(c.frame_bytes_a_to_b),
                static_cast<unsigned long long>(c.frames_b_to_a),
                static_cast<unsigned long long>(c.frame_bytes_b_to_a),
                static_cast<unsigned long long>(c.frame_bytes_a_to_b +
                                                c.frame_bytes_b_to_a));
  }
}

}  // namespace

int RunFlowsCommand(int argc, char** argv) {
  CLI::App app{
      "Per-flow byte table of a packet capture. Bytes are frame bytes from "
      "the wire length (as tshark -z conv reports them); the JSON adds "
      "IP-level bytes, the unit of trainscope_peer_*_bytes_total."};
  std::string file;
  bool json = false;
  app.add_option("--read,-r", file, "Capture file (pcap or pcapng)")
      ->required();
  app.add_flag("--json", json, "Print JSON instead of a table");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  CaptureSummary capture;
  if (Status read = ReadCaptureFile(file, &capture); !read.ok()) {
    std::cerr << "trainscope flows: cannot read " << file << ": "
              << read.message() << "\n";
    return 1;
  }
  if (json) {
    std::cout << Json(capture.conversations, capture.packets,
                      capture.packets_not_ip)
                     .dump(2)
              << "\n";
  } else {
    PrintTable(capture.conversations);
  }
  return 0;
}

}  // namespace trainscope
