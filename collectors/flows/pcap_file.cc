#include "flows/pcap_file.h"

#include <pcap/pcap.h>

#include <memory>

namespace trainscope {
namespace {

struct PcapCloser {
  void operator()(pcap_t* p) const { pcap_close(p); }
};
using PcapHandle = std::unique_ptr<pcap_t, PcapCloser>;

Status ReadPackets(pcap_t* pcap, CaptureSummary* out) {
  const int link = pcap_datalink(pcap);
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  int rc;
  while ((rc = pcap_next_ex(pcap, &header, &data)) == 1) {
    ++out->packets;
    // Wire lengths (pcap_pkthdr.len), so a headers-only capture (-s 128)
    // still counts exact bytes.
    auto parsed = ParsePacket(link, data, header->caplen, header->len);
    if (!parsed) {
      ++out->packets_not_ip;
      continue;
    }
    out->conversations.Add(*parsed);
  }
  if (rc == PCAP_ERROR) {
    return Status::Error(std::string("after ") + std::to_string(out->packets) +
                         " packets: " + pcap_geterr(pcap));
  }
  return Status::Ok();
}

}  // namespace

Status ReadCaptureFile(std::FILE* file, CaptureSummary* out) {
  char err[PCAP_ERRBUF_SIZE] = {};
  // On success pcap_close closes `file`; on failure libpcap leaves it open.
  PcapHandle pcap(pcap_fopen_offline(file, err));
  if (!pcap) {
    std::fclose(file);
    return Status::Error(err);
  }
  return ReadPackets(pcap.get(), out);
}

Status ReadCaptureFile(const std::string& path, CaptureSummary* out) {
  char err[PCAP_ERRBUF_SIZE] = {};
  PcapHandle pcap(pcap_open_offline(path.c_str(), err));
  if (!pcap) return Status::Error(err);
  return ReadPackets(pcap.get(), out);
}

}  // namespace trainscope
