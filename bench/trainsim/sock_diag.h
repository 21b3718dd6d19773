#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace trainsim {

// One TCP socket of the calling process's network namespace as the kernel
// reports it (NETLINK_SOCK_DIAG with tcp_info): bytes acknowledged by the
// peer (sent) and bytes received, by remote IPv4 address.
struct TcpSocketBytes {
  uint32_t inode = 0;
  std::string local, remote;  // "ip:port"
  std::string remote_ip;
  uint64_t bytes_acked = 0, bytes_received = 0;
};

// Lists every TCP socket (IPv4, and IPv6 with v4-mapped addresses shown as
// IPv4) with its byte counters; throws
// std::runtime_error when the netlink query fails.
std::vector<TcpSocketBytes> ListTcpSockets();

// Per-peer totals over a process's life: sockets that closed keep the
// counts they had when last seen, so a short-lived connection between two
// samples is the only thing missed.
class SocketLedger {
 public:
  void Observe(const std::vector<TcpSocketBytes>& sockets);
  // remote IP -> {sent, received}
  std::map<std::string, std::pair<uint64_t, uint64_t>> PerRemoteIp() const;

 private:
  // Keyed by the connection's two ends, not the inode: a socket its
  // process closed lingers (FIN_WAIT, inode 0) with the same counters and
  // must not count twice. A different non-zero inode on the same ends is
  // a new connection on a reused port: the old one's counts move to
  // closed_.
  std::map<std::pair<std::string, std::string>, TcpSocketBytes> seen_;
  std::map<std::string, std::pair<uint64_t, uint64_t>> closed_;
};

}  // namespace trainsim
