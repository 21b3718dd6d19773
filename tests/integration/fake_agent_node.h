#pragma once

#include <httplib.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace trainscope::testing {

// A node's agent as Prometheus sees it, for cluster-view tests: /metrics
// serves trainscope series of one training job, ctr in namespace training
// (3 PS, 4 workers over node-a and node-b), whose counters grow at fixed
// rates as an agent's would.
class FakeAgentNode {
 public:
  // Bytes/s each worker exchanges with each PS, per direction.
  using PsRates = std::map<std::string, double>;
  // ctr-ps-0 carries 80% of the PS traffic.
  static const PsRates kHotPs0;
  // Every PS a third.
  static const PsRates kBalanced;

  FakeAgentNode(std::string node, PsRates ps_rates);
  ~FakeAgentNode();
  FakeAgentNode(const FakeAgentNode&) = delete;
  FakeAgentNode& operator=(const FakeAgentNode&) = delete;

  // "127.0.0.1:port", a scrape target.
  std::string target() const;

 private:
  std::string Exposition(double seconds) const;

  std::string node_;
  PsRates ps_rates_;
  std::chrono::steady_clock::time_point start_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace trainscope::testing
