#include "stats.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace trainsim {
namespace fs = std::filesystem;
using nlohmann::json;

PodStats::PodStats(std::string pod, std::string role,
                   const std::vector<std::string>& peers)
    : pod_(std::move(pod)), role_(std::move(role)) {
  for (const std::string& p : peers)
    peers_[p] = std::make_unique<PeerCounters>();
}

PeerCounters* PodStats::Peer(const std::string& name) {
  auto it = peers_.find(name);
  return it == peers_.end() ? nullptr : it->second.get();
}

void PodStats::CountStep() {
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  std::lock_guard lock(step_mu_);
  ++steps_;
  last_step_epoch_s_ = now;
}

json PodStats::ToJson() const {
  json peers = json::object();
  for (const auto& [name, c] : peers_) {
    uint64_t tx = c->tx_bytes.load(), rx = c->rx_bytes.load();
    if (tx || rx) peers[name] = {{"tx_bytes", tx}, {"rx_bytes", rx}};
  }
  uint64_t steps;
  double last_step;
  {
    std::lock_guard lock(step_mu_);
    steps = steps_.load();
    last_step = last_step_epoch_s_;
  }
  json j = {{"pod", pod_}, {"role", role_}, {"steps", steps}, {"peers", peers}};
  if (last_step > 0) j["last_step_epoch_s"] = last_step;
  return j;
}

void PodStats::WriteFile(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << ToJson().dump() << "\n";
  }
  std::rename(tmp.c_str(), path.c_str());
}

GroundTruth ReadGroundTruth(const std::string& stats_dir,
                            std::map<std::string, uint64_t>* steps) {
  GroundTruth truth;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(stats_dir, ec)) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    json j = json::parse(in, nullptr, false);
    if (!j.is_object()) continue;
    const std::string pod = j.value("pod", "");
    auto& row = truth[pod];
    for (const auto& [peer, c] : j["peers"].items())
      row[peer] = {c.value("tx_bytes", uint64_t{0}),
                   c.value("rx_bytes", uint64_t{0})};
    if (steps) (*steps)[pod] = j.value("steps", uint64_t{0});
  }
  return truth;
}

std::map<std::string, StepCount> ReadStepCounts(const std::string& stats_dir) {
  std::map<std::string, StepCount> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(stats_dir, ec)) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    json j = json::parse(in, nullptr, false);
    if (!j.is_object() || !j.contains("pod") || !j["pod"].is_string()) continue;
    StepCount& c = out[j["pod"].get<std::string>()];
    c.steps = j.value("steps", uint64_t{0});
    c.last_step_epoch_s = j.value("last_step_epoch_s", 0.0);
  }
  return out;
}

std::vector<std::string> Inconsistencies(const GroundTruth& truth) {
  std::vector<std::string> out;
  for (const auto& [a, peers] : truth) {
    for (const auto& [b, bytes] : peers) {
      uint64_t received = 0;
      auto other = truth.find(b);
      if (other != truth.end()) {
        auto it = other->second.find(a);
        if (it != other->second.end()) received = it->second.rx;
      }
      if (bytes.tx != received)
        out.push_back(a + "->" + b + ": " + a + " sent " +
                      std::to_string(bytes.tx) + ", " + b + " received " +
                      std::to_string(received));
    }
  }
  return out;
}

}  // namespace trainsim
