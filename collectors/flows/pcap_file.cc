#include "flows/pcap_file.h"

#include <pcap/pcap.h>

#include <array>
#include <memory>

#include "trainscope/dl_library.h"

namespace trainscope {
namespace {

// libpcap is loaded when a capture is first read, not linked: the CLI runs
// (report, profile) on machines without it, and only `flows --read` needs
// it. The header gives the functions' types; no call binds at link time.
struct PcapFunctions {
  decltype(&::pcap_open_offline) open_offline = nullptr;
  decltype(&::pcap_fopen_offline) fopen_offline = nullptr;
  decltype(&::pcap_close) close = nullptr;
  decltype(&::pcap_datalink) datalink = nullptr;
  decltype(&::pcap_next_ex) next_ex = nullptr;
  decltype(&::pcap_geterr) geterr = nullptr;
};

struct LoadedPcap {
  DlHandle library;
  PcapFunctions fn;
  std::string error;  // why it could not be loaded; "" when loaded
};

// Debian's soname first, then the one most other distributions use.
constexpr std::array<const char*, 3> kPcapLibraries = {
    "libpcap.so.0.8", "libpcap.so.1", "libpcap.so"};

LoadedPcap LoadPcap() {
  LoadedPcap loaded;
  std::string why;
  for (const char* name : kPcapLibraries) {
    loaded.library = DlOpen(name, &why);
    if (loaded.library) break;
  }
  if (!loaded.library) {
    loaded.error =
        "libpcap is needed to read capture files and could not "
        "be loaded (" +
        why +
        "); install libpcap (Debian: "
        "libpcap0.8)";
    return loaded;
  }
  void* h = loaded.library.get();
  PcapFunctions& fn = loaded.fn;
  DlResolve(h, "pcap_open_offline", fn.open_offline);
  DlResolve(h, "pcap_fopen_offline", fn.fopen_offline);
  DlResolve(h, "pcap_close", fn.close);
  DlResolve(h, "pcap_datalink", fn.datalink);
  DlResolve(h, "pcap_next_ex", fn.next_ex);
  DlResolve(h, "pcap_geterr", fn.geterr);
  if (!fn.open_offline || !fn.fopen_offline || !fn.close || !fn.datalink ||
      !fn.next_ex || !fn.geterr) {
    loaded.error = "the libpcap found lacks the functions to read a capture";
    loaded.library.reset();
  }
  return loaded;
}

// Loaded once per process (thread-safe), kept until exit.
const LoadedPcap& Pcap() {
  static const LoadedPcap pcap = LoadPcap();
  return pcap;
}

struct PcapCloser {
  void operator()(pcap_t* p) const { Pcap().fn.close(p); }
};
using PcapHandle = std::unique_ptr<pcap_t, PcapCloser>;

Status ReadPackets(pcap_t* pcap, CaptureSummary* out) {
  const PcapFunctions& fn = Pcap().fn;
  const int link = fn.datalink(pcap);
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  int rc;
  while ((rc = fn.next_ex(pcap, &header, &data)) == 1) {
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
                         " packets: " + fn.geterr(pcap));
  }
  return Status::Ok();
}

}  // namespace

Status ReadCaptureFile(std::FILE* file, CaptureSummary* out) {
  if (!Pcap().library) {
    std::fclose(file);
    return Status::Error(Pcap().error);
  }
  char err[PCAP_ERRBUF_SIZE] = {};
  // On success pcap_close closes `file`; on failure libpcap leaves it open.
  PcapHandle pcap(Pcap().fn.fopen_offline(file, err));
  if (!pcap) {
    std::fclose(file);
    return Status::Error(err);
  }
  return ReadPackets(pcap.get(), out);
}

Status ReadCaptureFile(const std::string& path, CaptureSummary* out) {
  if (!Pcap().library) return Status::Error(Pcap().error);
  char err[PCAP_ERRBUF_SIZE] = {};
  PcapHandle pcap(Pcap().fn.open_offline(path.c_str(), err));
  if (!pcap) return Status::Error(err);
  return ReadPackets(pcap.get(), out);
}

}  // namespace trainscope
