#include "http/connections.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

namespace trainscope {

HttpConnectionTable::HttpConnectionTable(const HttpLimits& limits)
    : limits_(limits) {}

std::string HttpConnectionTable::AddressKey(const sockaddr* addr,
                                            socklen_t len) {
  if (addr && addr->sa_family == AF_INET &&
      len >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    return std::string(reinterpret_cast<const char*>(&in->sin_addr), 4);
  }
  if (addr && addr->sa_family == AF_INET6 &&
      len >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    const char* bytes = reinterpret_cast<const char*>(&in6->sin6_addr);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
      return std::string(bytes + 12, 4);
    return std::string(bytes, 16);
  }
  return "other";
}

HttpConnectionTable::Verdict HttpConnectionTable::Admit(int fd,
                                                        const sockaddr* addr,
                                                        socklen_t len,
                                                        Clock::time_point now) {
  std::string key = AddressKey(addr, len);
  std::lock_guard lock(mu_);
  if (by_fd_.size() >= static_cast<size_t>(limits_.max_connections)) {
    return Verdict::kTooMany;
  }
  int& from_address = per_address_[key];  // >= 1 once created here
  if (limits_.max_connections_per_ip > 0 &&
      from_address >= limits_.max_connections_per_ip) {
    return Verdict::kTooManyFromAddress;
  }
  ++from_address;
  by_fd_[fd] = Entry{std::move(key), true, now + limits_.timeout};
  return Verdict::kAdmitted;
}

void HttpConnectionTable::HeaderReceived(int fd) {
  std::lock_guard lock(mu_);
  auto it = by_fd_.find(fd);
  if (it != by_fd_.end()) it->second.awaiting_header = false;
}

void HttpConnectionTable::RequestDone(int fd, Clock::time_point now) {
  std::lock_guard lock(mu_);
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return;
  it->second.awaiting_header = true;
  it->second.deadline = now + limits_.timeout;
}

void HttpConnectionTable::Closed(int fd) {
  std::lock_guard lock(mu_);
  auto it = by_fd_.find(fd);
  if (it != by_fd_.end()) EraseLocked(it);
}

void HttpConnectionTable::EraseLocked(
    std::unordered_map<int, Entry>::iterator it) {
  auto count = per_address_.find(it->second.address);
  if (count != per_address_.end() && --count->second <= 0) {
    per_address_.erase(count);
  }
  by_fd_.erase(it);
}

int HttpConnectionTable::ShutdownOverdue(Clock::time_point now) {
  std::lock_guard lock(mu_);
  int overdue = 0;
  for (auto& [fd, entry] : by_fd_) {
    if (!entry.awaiting_header || entry.deadline > now) continue;
    // The socket stays open (the event loop owns and closes it; Closed()
    // takes this lock first, so the descriptor cannot be reused meanwhile).
    ::shutdown(fd, SHUT_RDWR);
    entry.awaiting_header = false;  // once is enough
    ++overdue;
  }
  return overdue;
}

size_t HttpConnectionTable::open() const {
  std::lock_guard lock(mu_);
  return by_fd_.size();
}

}  // namespace trainscope
