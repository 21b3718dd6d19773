#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/connections.h"
#include "trainscope/unique_fd.h"

namespace trainscope {
namespace {

using std::chrono::milliseconds;
using Clock = HttpConnectionTable::Clock;
using Verdict = HttpConnectionTable::Verdict;

sockaddr_in V4(const char* ip) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

Verdict AdmitFrom(HttpConnectionTable& t, int fd, const char* ip,
                  Clock::time_point now = Clock::now()) {
  sockaddr_in a = V4(ip);
  return t.Admit(fd, reinterpret_cast<sockaddr*>(&a), sizeof a, now);
}

TEST(HttpConnectionTableTest, CapsConnectionsInAll) {
  HttpConnectionTable t(
      HttpLimits{.max_connections = 3, .max_connections_per_ip = 0});
  for (int fd = 10; fd < 13; ++fd) {
    EXPECT_EQ(AdmitFrom(t, fd, "198.18.0.1"), Verdict::kAdmitted);
  }
  EXPECT_EQ(AdmitFrom(t, 13, "198.18.0.2"), Verdict::kTooMany);
  t.Closed(11);
  EXPECT_EQ(t.open(), 2u);
  EXPECT_EQ(AdmitFrom(t, 13, "198.18.0.2"), Verdict::kAdmitted);
}

TEST(HttpConnectionTableTest, CapsConnectionsPerAddress) {
  HttpConnectionTable t(
      HttpLimits{.max_connections = 100, .max_connections_per_ip = 2});
  EXPECT_EQ(AdmitFrom(t, 1, "198.18.0.1"), Verdict::kAdmitted);
  EXPECT_EQ(AdmitFrom(t, 2, "198.18.0.1"), Verdict::kAdmitted);
  EXPECT_EQ(AdmitFrom(t, 3, "198.18.0.1"), Verdict::kTooManyFromAddress);
  EXPECT_EQ(AdmitFrom(t, 3, "198.18.0.2"), Verdict::kAdmitted);
  t.Closed(1);
  EXPECT_EQ(AdmitFrom(t, 4, "198.18.0.1"), Verdict::kAdmitted);
}

TEST(HttpConnectionTableTest, MappedIpv6CountsAsIpv4) {
  sockaddr_in v4 = V4("198.18.0.7");
  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  inet_pton(AF_INET6, "::ffff:198.18.0.7", &v6.sin6_addr);
  EXPECT_EQ(HttpConnectionTable::AddressKey(reinterpret_cast<sockaddr*>(&v4),
                                            sizeof v4),
            HttpConnectionTable::AddressKey(reinterpret_cast<sockaddr*>(&v6),
                                            sizeof v6));
  inet_pton(AF_INET6, "2001:db8::7", &v6.sin6_addr);
  EXPECT_EQ(HttpConnectionTable::AddressKey(reinterpret_cast<sockaddr*>(&v6),
                                            sizeof v6)
                .size(),
            16u);
}

// A socket pair stands in for a client connection: after the table shuts
// the server side down, the client reads end-of-stream.
struct Pair {
  Pair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    server.reset(fds[0]);
    client.reset(fds[1]);
  }
  bool ClientSeesEnd() const {
    char c;
    return ::recv(client.get(), &c, 1, MSG_DONTWAIT) == 0;
  }
  UniqueFd server, client;
};

TEST(HttpConnectionTableTest, OverdueHeaderShutsTheSocketDown) {
  HttpConnectionTable t(HttpLimits{.timeout = milliseconds(1000)});
  Pair slow, quick;
  const auto t0 = Clock::now();
  AdmitFrom(t, slow.server.get(), "198.18.0.1", t0);
  AdmitFrom(t, quick.server.get(), "198.18.0.2", t0);
  t.HeaderReceived(quick.server.get());  // its request is being served
  EXPECT_EQ(t.ShutdownOverdue(t0 + milliseconds(999)), 0);
  EXPECT_EQ(t.ShutdownOverdue(t0 + milliseconds(1000)), 1);
  EXPECT_TRUE(slow.ClientSeesEnd());
  EXPECT_FALSE(quick.ClientSeesEnd());
  // Once is enough: the event loop closes it and reports Closed().
  EXPECT_EQ(t.ShutdownOverdue(t0 + milliseconds(5000)), 0);
}

TEST(HttpConnectionTableTest, EachRequestGetsAFreshHeaderDeadline) {
  HttpConnectionTable t(HttpLimits{.timeout = milliseconds(1000)});
  Pair keep_alive;
  const auto t0 = Clock::now();
  AdmitFrom(t, keep_alive.server.get(), "198.18.0.1", t0);
  t.HeaderReceived(keep_alive.server.get());
  t.RequestDone(keep_alive.server.get(), t0 + milliseconds(3000));
  EXPECT_EQ(t.ShutdownOverdue(t0 + milliseconds(3500)), 0);
  EXPECT_EQ(t.ShutdownOverdue(t0 + milliseconds(4000)), 1);
  EXPECT_TRUE(keep_alive.ClientSeesEnd());
}

}  // namespace
}  // namespace trainscope
