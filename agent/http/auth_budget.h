#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace trainscope {

// How much bcrypt work clients may make the server do. bcrypt is slow by
// design (tens of milliseconds a check at cost 10) and runs on an event-loop
// thread, so a flood of wrong passwords would otherwise take every loop
// thread and delay scrapes. Two bounds:
//  - per client address, a token bucket: `burst` checks at once, then one
//    every `refill` (a person who mistypes keeps trying; a flood from one
//    address costs at most one check per `refill`);
//  - in all, `max_concurrent` checks at a time, so the other loop threads
//    stay free for scrapes whatever the number of addresses.
// A check beyond either bound is not run: the request is answered 429.
// Thread-safe.
class HttpAuthBudget {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    int burst = 5;
    Clock::duration refill = std::chrono::seconds(1);
    int max_concurrent = 1;
    size_t max_addresses = 4096;  // remembered buckets; beyond, a fresh start
  };

  HttpAuthBudget() : HttpAuthBudget(Options{}) {}
  explicit HttpAuthBudget(Options options);

  // A check that may run; releases its concurrency slot when destroyed.
  class Ticket {
   public:
    Ticket() = default;
    explicit Ticket(HttpAuthBudget* owner) : owner_(owner) {}
    Ticket(Ticket&& other) noexcept : owner_(other.owner_) {
      other.owner_ = nullptr;
    }
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket() {
      if (owner_) owner_->Release();
    }
    explicit operator bool() const { return owner_ != nullptr; }

   private:
    HttpAuthBudget* owner_ = nullptr;
  };

  // A ticket when `address` may have one more check now; an empty one
  // (false) when the request must be throttled.
  Ticket TryAcquire(const std::string& address, Clock::time_point now);

 private:
  void Release();

  struct Bucket {
    double tokens = 0;
    Clock::time_point updated;
  };

  const Options options_;
  std::mutex mu_;
  int running_ = 0;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace trainscope
