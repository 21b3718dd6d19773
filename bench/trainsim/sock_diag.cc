#include "sock_diag.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace trainsim {
namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// "ip:port"; an IPv4-mapped IPv6 address (a dual-stack socket, as gRPC's
// [::] listeners accept) becomes its IPv4 form, so peers match pod IPs.
std::string Addr(uint8_t family, const __be32* addr, __be16 port,
                 std::string* ip_only) {
  char buf[INET6_ADDRSTRLEN] = {};
  const bool mapped = family == AF_INET6 && addr[0] == 0 && addr[1] == 0 &&
                      addr[2] == htonl(0xffff);
  if (family == AF_INET || mapped)
    inet_ntop(AF_INET, mapped ? &addr[3] : addr, buf, sizeof buf);
  else
    inet_ntop(AF_INET6, addr, buf, sizeof buf);
  if (ip_only) *ip_only = buf;
  return std::string(buf) + ":" + std::to_string(ntohs(port));
}

void ListFamily(uint8_t family, std::vector<TcpSocketBytes>& out) {
  Fd fd(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (fd.get() < 0)
    throw std::runtime_error(std::string("sock_diag socket: ") +
                             std::strerror(errno));
  struct {
    nlmsghdr nlh;
    inet_diag_req_v2 req;
  } msg{};
  msg.nlh.nlmsg_len = sizeof msg;
  msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  msg.req.sdiag_family = family;
  msg.req.sdiag_protocol = IPPROTO_TCP;
  msg.req.idiag_states = ~0U;
  msg.req.idiag_ext = 1 << (INET_DIAG_INFO - 1);
  if (send(fd.get(), &msg, sizeof msg, 0) < 0)
    throw std::runtime_error(std::string("sock_diag send: ") +
                             std::strerror(errno));

  alignas(nlmsghdr) char buf[32768];
  while (true) {
    ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("sock_diag recv: ") +
                               std::strerror(errno));
    }
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, n);
         h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type == NLMSG_DONE) return;
      if (h->nlmsg_type == NLMSG_ERROR)
        throw std::runtime_error("sock_diag: netlink error");
      auto* d = static_cast<inet_diag_msg*>(NLMSG_DATA(h));
      TcpSocketBytes s;
      s.inode = d->idiag_inode;
      s.local = Addr(family, d->id.idiag_src, d->id.idiag_sport, nullptr);
      s.remote = Addr(family, d->id.idiag_dst, d->id.idiag_dport, &s.remote_ip);
      int len = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof *d));
      for (auto* a = reinterpret_cast<rtattr*>(d + 1); RTA_OK(a, len);
           a = RTA_NEXT(a, len)) {
        if (a->rta_type != INET_DIAG_INFO) continue;
        tcp_info info{};
        std::memcpy(&info, RTA_DATA(a),
                    std::min<size_t>(RTA_PAYLOAD(a), sizeof info));
        // The peer's acks of our SYN and (in FIN_WAIT2) our FIN advance
        // snd_una by sequence numbers that carried no byte;
        // tcpi_bytes_acked counts them.
        constexpr uint8_t kFinWait2 = 5;  // TCP_FIN_WAIT2
        const uint64_t flags = d->idiag_state == kFinWait2 ? 2 : 1;
        s.bytes_acked =
            info.tcpi_bytes_acked > flags ? info.tcpi_bytes_acked - flags : 0;
        // Likewise the peer's FIN, once received (CLOSE_WAIT, LAST_ACK,
        // CLOSING), advanced rcv_nxt by one.
        const uint8_t st = d->idiag_state;
        const uint64_t fin_in = st == 8 || st == 9 || st == 11 ? 1 : 0;
        s.bytes_received = info.tcpi_bytes_received > fin_in
                               ? info.tcpi_bytes_received - fin_in
                               : 0;
      }
      out.push_back(std::move(s));
    }
  }
}

}  // namespace

std::vector<TcpSocketBytes> ListTcpSockets() {
  std::vector<TcpSocketBytes> out;
  ListFamily(AF_INET, out);
  ListFamily(AF_INET6, out);
  return out;
}

void SocketLedger::Observe(const std::vector<TcpSocketBytes>& sockets) {
  for (const TcpSocketBytes& s : sockets) {
    // Listeners and sockets the kernel no longer tracks (time-wait) carry
    // no counters worth keeping; never let a later zero erase a count.
    if (s.bytes_acked == 0 && s.bytes_received == 0) continue;
    TcpSocketBytes& kept = seen_[{s.local, s.remote}];
    if (kept.inode != 0 && s.inode != 0 && kept.inode != s.inode) {
      closed_[kept.remote_ip].first += kept.bytes_acked;
      closed_[kept.remote_ip].second += kept.bytes_received;
      kept = TcpSocketBytes{};
    }
    if (s.inode != 0) kept.inode = s.inode;
    kept.remote_ip = s.remote_ip;
    kept.bytes_acked = std::max(kept.bytes_acked, s.bytes_acked);
    kept.bytes_received = std::max(kept.bytes_received, s.bytes_received);
  }
}

std::map<std::string, std::pair<uint64_t, uint64_t>> SocketLedger::PerRemoteIp()
    const {
  auto out = closed_;
  for (const auto& [key, s] : seen_) {
    out[s.remote_ip].first += s.bytes_acked;
    out[s.remote_ip].second += s.bytes_received;
  }
  return out;
}

}  // namespace trainsim
