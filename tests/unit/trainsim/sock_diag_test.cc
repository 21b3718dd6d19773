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

  const std::string client_port = std::to_string(ntohs(addr.sin_port));
  SocketLedger ledger;
  ledger.Observe(ListTcpSockets());
  uint64_t acked = 0, received = 0;
  for (const TcpSocketBytes& s : ListTcpSockets())
    if (s.remote == "127.0.0.1:" + client_port) {
      acked = s.bytes_acked;
      received = s.bytes_received;
    }
  EXPECT_EQ(acked, payload.size());
  EXPECT_EQ(received, 2u);
  // Closed sockets keep their counts in the ledger.
  close(client);
  close(server);
  close(listener);
  ledger.Observe(ListTcpSockets());
  auto per_ip = ledger.PerRemoteIp();
  // Both ends are on 127.0.0.1: the two directions add up.
  EXPECT_EQ(per_ip["127.0.0.1"].first, payload.size() + 2);
  EXPECT_EQ(per_ip["127.0.0.1"].second, payload.size() + 2);
}

}  // namespace
}  // namespace trainsim
