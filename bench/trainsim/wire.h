#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "stats.h"

namespace trainsim {

// Stop flag shared by the threads of a pod process; once set, socket waits
// give up after the drain deadline so every thread ends in bounded time.
struct StopState {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> deadline_ms{0};  // steady clock, set with stop
  void Request(std::chrono::milliseconds drain);
  bool Expired() const;
};

// A connected TCP socket whose bytes are counted against one peer. Closes
// on destruction.
class Conn {
 public:
  Conn(int fd, PeerCounters* counters, const StopState& stop);
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  ~Conn();

  // false on error, EOF or stop (bytes that did move are still counted).
  bool WriteAll(const void* data, size_t len);
  bool WriteZeros(uint64_t len);
  bool ReadFull(void* data, size_t len);
  bool Discard(uint64_t len);
  bool WriteRequest(uint64_t len);
  bool ReadRequest(uint64_t* len);
  // Ends our direction and reads the peer's remaining bytes until EOF, so
  // both ends count the same totals.
  void Drain();

 private:
  int fd_;
  PeerCounters* counters_;
  const StopState& stop_;
};

int ListenTcp(int port);  // throws
// Retries (every 100 ms) until connected, stopped, or `timeout`; -1 then.
int ConnectTcp(const std::string& ip, int port, const StopState& stop,
               std::chrono::milliseconds timeout);
// Waits up to 200 ms; -1 when nothing arrived. *peer_ip gets the address.
int AcceptTcp(int listen_fd, std::string* peer_ip);

}  // namespace trainsim
