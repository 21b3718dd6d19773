#include "sock_diag.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

namespace trainsim {
namespace {

// The kernel's per-socket counters for a loopback connection: what a
// program pod's ground truth is made of.
TEST(SockDiagTest, CountsBytesOfALoopbackConnection) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  ASSERT_EQ(listen(listener, 1), 0);
  int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr),
            0);
  int server = accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  const std::string payload(100000, 'x');
  std::thread reader([&] {
    char buf[65536];
    size_t got = 0;
    while (got < payload.size()) {
      ssize_t n = read(server, buf, sizeof buf);
      if (n <= 0) break;
      got += n;
    }
  });
  size_t sent = 0;
  while (sent < payload.size()) {
    ssize_t n = write(client, payload.data() + sent, payload.size() - sent);
    ASSERT_GT(n, 0);
    sent += n;
  }
  reader.join();
  ASSERT_EQ(write(server, "ok", 2), 2);
  char ok[2];
  ASSERT_EQ(read(client, ok, 2), 2);

  // Only this connection's two sockets: other processes use loopback too.
  const std::string server_end =
      "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  auto ours = [&] {
    std::vector<TcpSocketBytes> out;
    for (const TcpSocketBytes& s : ListTcpSockets())
      if (s.remote == server_end || s.local == server_end) out.push_back(s);
    return out;
  };
  SocketLedger ledger;
  ledger.Observe(ours());
  uint64_t acked = 0, received = 0;
  for (const TcpSocketBytes& s : ours())
    if (s.remote == server_end) {
      acked = s.bytes_acked;
      received = s.bytes_received;
    }
  // tcp_info counts sequence numbers: SYN and FIN may add one each.
  EXPECT_GE(acked, payload.size());
  EXPECT_LE(acked, payload.size() + 2);
  EXPECT_EQ(received, 2u);
  // Closed sockets keep their counts in the ledger.
  close(client);
  close(server);
  close(listener);
  ledger.Observe(ours());
  auto per_ip = ledger.PerRemoteIp();
  // Both ends are on 127.0.0.1: the two directions add up.
  // "ok" may not be acked yet (delayed ACK): the sent side lags a little.
  EXPECT_GE(per_ip["127.0.0.1"].first, payload.size());
  EXPECT_LE(per_ip["127.0.0.1"].first, payload.size() + 2 + 4);
  EXPECT_GE(per_ip["127.0.0.1"].second, payload.size() + 2);
  EXPECT_LE(per_ip["127.0.0.1"].second, payload.size() + 2 + 4);
}

// An orphaned socket (its process gone, inode 0) is the same connection;
// a new inode on the same ends is a new one (port reuse).
TEST(SockDiagTest, LedgerCountsEachConnectionOnce) {
  auto sock = [](uint32_t inode, uint64_t tx, uint64_t rx) {
    TcpSocketBytes s;
    s.inode = inode;
    s.local = "198.18.0.10:40000";
    s.remote = "198.18.0.11:2222";
    s.remote_ip = "198.18.0.11";
    s.bytes_acked = tx;
    s.bytes_received = rx;
    return s;
  };
  SocketLedger ledger;
  ledger.Observe({sock(5, 100, 10)});
  ledger.Observe({sock(0, 120, 10)});  // closed by its process, lingering
  ledger.Observe({});                  // gone
  EXPECT_EQ(ledger.PerRemoteIp()["198.18.0.11"],
            (std::pair<uint64_t, uint64_t>{120, 10}));
  ledger.Observe({sock(9, 7, 3)});  // the port reused by a new connection
  EXPECT_EQ(ledger.PerRemoteIp()["198.18.0.11"],
            (std::pair<uint64_t, uint64_t>{127, 13}));
}

}  // namespace
}  // namespace trainsim
