#include "flows/pcap_capture.h"

#include <net/if.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>

namespace trainscope {

namespace fs = std::filesystem;

struct PcapCapture::Handle {
  struct Closer {
    void operator()(pcap_t* p) const { pcap_close(p); }
  };
  std::string name;
  std::unique_ptr<pcap_t, Closer> pcap;
  int link_type = 0;
  int ifindex = 0;  // the handle's own interface (SLL2 packets carry theirs)
  uint64_t drops = 0, ifdrops = 0;
};

std::string TrainingPortFilter(const std::vector<uint16_t>& ports) {
  std::string f = "(tcp or udp)";
  if (ports.empty()) return f;
  f += " and (";
  for (size_t i = 0; i < ports.size(); ++i) {
    if (i) f += " or ";
    f += "port " + std::to_string(ports[i]);
  }
  return f + ")";
}

std::vector<std::string> PhysicalInterfaces(const fs::path& sys) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(sys / "class/net", ec)) {
    if (fs::exists(entry.path() / "device", ec)) {
      out.push_back(entry.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::unique_ptr<PcapCapture> PcapCapture::Open(const PcapOptions& options,
                                               const fs::path& sys,
                                               Status* error) {
  std::unique_ptr<PcapCapture> self(new PcapCapture());
  self->accounting_ = PacketAccounting(65536, options.burst_gap_s);
  std::vector<std::string> names = options.interfaces;
  if (names.empty()) names = PhysicalInterfaces(sys);
  if (names.empty()) {
    *error = Status::Error("no physical network interface under " +
                           (sys / "class/net").string() +
                           "; set --pcap-interfaces (\"any\" works)");
    return nullptr;
  }
  const std::string filter = TrainingPortFilter(options.ports);
  for (const auto& name : names) {
    char err[PCAP_ERRBUF_SIZE] = {};
    auto h = std::make_unique<Handle>();
    h->name = name;
    h->pcap.reset(pcap_create(name.c_str(), err));
    auto fail = [&](const std::string& what) {
      *error = Status::Error("pcap on " + name + ": " + what);
      return nullptr;
    };
    if (!h->pcap) return fail(err);
    pcap_t* p = h->pcap.get();
    pcap_set_snaplen(p, options.snaplen);
    pcap_set_promisc(p, 0);
    pcap_set_timeout(p, 200);
    // Batch delivery through the TPACKET_V3 ring; latency does not matter.
    pcap_set_immediate_mode(p, 0);
    pcap_set_buffer_size(p, options.buffer_bytes);
    if (int rc = pcap_activate(p); rc < 0) {
      return fail(std::string(pcap_statustostr(rc)) + ": " + pcap_geterr(p));
    }
    if (name == "any") {
      // SLL2 carries the ifindex, which deduplication needs.
      if (pcap_set_datalink(p, DLT_LINUX_SLL2) != 0) {
        spdlog::warn(
            "[flows] pcap on any: no DLT_LINUX_SLL2 ({}); packets "
            "crossing several interfaces may count more than once",
            pcap_geterr(p));
      }
    }
    bpf_program prog{};
    if (pcap_compile(p, &prog, filter.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0) {
      return fail("filter '" + filter + "': " + pcap_geterr(p));
    }
    int rc = pcap_setfilter(p, &prog);
    pcap_freecode(&prog);
    if (rc != 0) return fail(std::string("setfilter: ") + pcap_geterr(p));
    if (pcap_setnonblock(p, 1, err) != 0) return fail(err);
    h->link_type = pcap_datalink(p);
    h->ifindex = static_cast<int>(if_nametoindex(name.c_str()));
    self->names_.push_back(name);
    self->handles_.push_back(std::move(h));
  }
  std::string joined;
  for (const auto& n : self->names_) joined += (joined.empty() ? "" : ",") + n;
  spdlog::info("[flows] libpcap capturing on {} with filter '{}'", joined,
               filter);
  self->thread_ = std::thread([s = self.get()] { s->Loop(); });
  return self;
}

PcapCapture::~PcapCapture() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void PcapCapture::Loop() {
  struct Ctx {
    PcapCapture* self;
    Handle* h;
  };
  while (!stop_) {
    std::vector<pollfd> fds;
    std::vector<Handle*> live;
    for (auto& h : handles_) {
      if (!h->pcap) continue;
      fds.push_back({pcap_get_selectable_fd(h->pcap.get()), POLLIN, 0});
      live.push_back(h.get());
    }
    if (live.empty()) return;
    // The timeout bounds how long Stop waits and how stale a cycle can be.
    ::poll(fds.data(), fds.size(), 200);
    for (size_t i = 0; i < live.size(); ++i) {
      Handle* h = live[i];
      Ctx ctx{this, h};
      int n = pcap_dispatch(
          h->pcap.get(), 4096,
          [](u_char* user, const pcap_pkthdr* hdr, const u_char* bytes) {
            auto* c = reinterpret_cast<Ctx*>(user);
            auto parsed =
                ParsePacket(c->h->link_type, bytes, hdr->caplen, hdr->len);
            if (!parsed) return;
            parsed->timestamp_s = static_cast<double>(hdr->ts.tv_sec) +
                                  static_cast<double>(hdr->ts.tv_usec) / 1e6;
            int ifindex =
                parsed->ifindex >= 0 ? parsed->ifindex : c->h->ifindex;
            std::lock_guard lock(c->self->mu_);
            c->self->accounting_.Add(*parsed, ifindex);
          },
          reinterpret_cast<u_char*>(&ctx));
      if (n == PCAP_ERROR) {
        std::string why = pcap_geterr(h->pcap.get());
        spdlog::error("[flows] capture on {} stopped: {}", h->name, why);
        std::lock_guard lock(mu_);
        pcap_stat st{};
        if (pcap_stats(h->pcap.get(), &st) == 0) {
          closed_drops_ += st.ps_drop;
          closed_ifdrops_ += st.ps_ifdrop;
        }
        if (!failure_.empty()) failure_ += "; ";
        failure_ += "capture on " + h->name + " stopped: " + why;
        h->pcap.reset();
      }
    }
    // pcap_t is not thread-safe: statistics are read here, next to
    // pcap_dispatch, and only their copies are shared.
    std::lock_guard lock(mu_);
    RefreshStats();
  }
}

void PcapCapture::SetLocalPods(std::map<IpAddress, std::string> local) {
  std::lock_guard lock(mu_);
  accounting_.SetLocalPods(std::move(local));
}

std::vector<FlowDelta> PcapCapture::TakeDeltas() {
  std::lock_guard lock(mu_);
  return accounting_.TakeDeltas();
}

std::vector<BurstEvent> PcapCapture::TakeBursts() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  std::lock_guard lock(mu_);
  return accounting_.TakeBursts(static_cast<double>(now.tv_sec) +
                                static_cast<double>(now.tv_nsec) / 1e9);
}

void PcapCapture::RefreshStats() {
  for (auto& h : handles_) {
    if (!h->pcap) continue;
    pcap_stat st{};
    if (pcap_stats(h->pcap.get(), &st) == 0) {
      h->drops = st.ps_drop;
      h->ifdrops = st.ps_ifdrop;
    }
  }
}

uint64_t PcapCapture::kernel_drops() {
  std::lock_guard lock(mu_);
  uint64_t sum = closed_drops_;
  for (auto& h : handles_) sum += h->pcap ? h->drops : 0;
  return sum;
}

uint64_t PcapCapture::interface_drops() {
  std::lock_guard lock(mu_);
  uint64_t sum = closed_ifdrops_;
  for (auto& h : handles_) sum += h->pcap ? h->ifdrops : 0;
  return sum;
}

std::string PcapCapture::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

}  // namespace trainscope
