#include "fake_agent_node.h"

#include <sstream>

namespace trainscope::testing {
namespace {

struct FakePod {
  std::string name;
  std::string role;
  std::string node;
  double cpu_cores;
};

const std::vector<FakePod> kPods = {{"ctr-ps-0", "ps", "node-b", 0.6},
                                    {"ctr-ps-1", "ps", "node-a", 0.3},
                                    {"ctr-ps-2", "ps", "node-b", 0.3},
                                    {"ctr-worker-0", "worker", "node-a", 0.5},
                                    {"ctr-worker-1", "worker", "node-a", 0.5},
                                    {"ctr-worker-2", "worker", "node-b", 0.5},
                                    {"ctr-worker-3", "worker", "node-b", 0.5}};

std::string PodLabels(const FakePod& p) {
  return "namespace=\"training\",pod=\"" + p.name +
         "\",training_job=\"ctr\",role=\"" + p.role + "\",replica_index=\"" +
         p.name.substr(p.name.rfind('-') + 1) + "\"";
}

}  // namespace

const FakeAgentNode::PsRates FakeAgentNode::kHotPs0 = {
    {"ctr-ps-0", 4e6}, {"ctr-ps-1", 0.5e6}, {"ctr-ps-2", 0.5e6}};
const FakeAgentNode::PsRates FakeAgentNode::kBalanced = {
    {"ctr-ps-0", 1e6}, {"ctr-ps-1", 1e6}, {"ctr-ps-2", 1e6}};

FakeAgentNode::FakeAgentNode(std::string node, PsRates ps_rates)
    : node_(std::move(node)), ps_rates_(std::move(ps_rates)) {
  start_ = std::chrono::steady_clock::now();
  server_.Get("/metrics", [this](const httplib::Request&,
                                 httplib::Response& res) {
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
            .count();
    res.set_content(Exposition(t), "text/plain; version=0.0.4");
  });
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  // stop() before the loop runs would be lost and join() would hang.
  while (!server_.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

FakeAgentNode::~FakeAgentNode() {
  server_.stop();
  thread_.join();
}

std::string FakeAgentNode::target() const {
  return "127.0.0.1:" + std::to_string(port_);
}

std::string FakeAgentNode::Exposition(double t) const {
  std::ostringstream out;
  out << "# TYPE trainscope_pod_info gauge\n";
  for (const auto& p : kPods) {
    if (p.node != node_) continue;
    out << "trainscope_pod_info{" << PodLabels(p) << ",node=\"" << node_
        << "\",uid=\"uid-" << p.name << "\"} 1\n";
  }
  out << "# TYPE trainscope_pod_cpu_usage_seconds_total counter\n";
  for (const auto& p : kPods) {
    if (p.node != node_) continue;
    out << "trainscope_pod_cpu_usage_seconds_total{" << PodLabels(p) << "} "
        << 100 + p.cpu_cores * t << "\n";
  }
  for (const char* dir : {"receive", "transmit"}) {
    out << "# TYPE trainscope_peer_" << dir << "_bytes_total counter\n";
    for (const auto& p : kPods) {
      if (p.node != node_ || p.role != "worker") continue;
      for (const auto& [ps, rate] : ps_rates_) {
        out << "trainscope_peer_" << dir << "_bytes_total{" << PodLabels(p)
            << ",peer_namespace=\"training\",peer_pod=\"" << ps
            << "\",peer_role=\"ps\"} " << static_cast<uint64_t>(1e6 + rate * t)
            << "\n";
      }
    }
  }
  out << "# TYPE trainscope_node_cpu_count gauge\n"
      << "trainscope_node_cpu_count{node=\"" << node_ << "\"} 8\n";
  return out.str();
}

}  // namespace trainscope::testing
