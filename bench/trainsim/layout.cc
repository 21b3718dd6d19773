#include "layout.h"

#include <cstdint>
#include <cstdio>
#include <random>

#include "cluster.h"

namespace trainsim {

uint64_t Fnv1a(const std::string& s, uint64_t seed) {
  uint64_t h = 1469598103934665603ULL ^ seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

namespace {

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string Hex(uint64_t& state, int digits) {
  std::string out;
  while (static_cast<int>(out.size()) < digits) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx",
                  static_cast<unsigned long long>(SplitMix(state)));
    out += buf;
  }
  return out.substr(0, digits);
}

}  // namespace

bool ValidRunId(const std::string& run_id) {
  if (run_id.size() != 8) return false;
  for (char c : run_id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string NewRunId() {
  std::random_device rd;
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
  return buf;
}

std::string UnderscoredUid(const std::string& uid) {
  std::string out = uid;
  for (char& c : out)
    if (c == '-') c = '_';
  return out;
}

const SimPod* Layout::Find(const std::string& pod_name) const {
  for (const SimPod& p : pods)
    if (p.name == pod_name) return &p;
  return nullptr;
}

const SimPod* Layout::FindByIp(const std::string& ip) const {
  for (const SimPod& p : pods)
    if (p.ip == ip) return &p;
  return nullptr;
}

Layout MakeLayout(const Scenario& scenario, const std::string& run_id) {
  Layout layout;
  layout.run_id = run_id;
  layout.node_name = "trainsim-" + run_id;
  layout.bridge = "ts" + run_id + "br";
  int n = 0;
  for (const Job& job : scenario.jobs) {
    for (const auto& [role, count] : job.Replicas()) {
      for (int k = 0; k < count; ++k, ++n) {
        SimPod p;
        p.job = &job;
        p.role = role;
        p.index = k;
        p.global_index = n;
        p.name = job.PodName(role, k);
        uint64_t state =
            Fnv1a(job.namespace_name + "/" + p.name, Fnv1a(run_id, 0));
        std::string h = Hex(state, 20);
        // Version-4 shaped; the run id and a fixed marker lead, so cleanup
        // finds a run's cgroups by name alone and never touches other pods.
        p.uid = run_id + "-" + std::string(kUidMarker) + "-4" + h.substr(0, 3) +
                "-a" + h.substr(3, 3) + "-" + h.substr(6, 12);
        p.container_id = Hex(state, 64);
        // .0.1 onwards; 131072 addresses is far beyond any scenario here.
        uint32_t host = 10 + static_cast<uint32_t>(n);
        p.ip = "198." + std::to_string(18 + (host >> 16)) + "." +
               std::to_string((host >> 8) & 0xff) + "." +
               std::to_string(host & 0xff);
        p.netns = "trainsim-" + run_id + "-" + p.name;
        p.host_veth = "ts" + run_id + "h" + std::to_string(n);
        p.peer_veth = "ts" + run_id + "p" + std::to_string(n);
        p.resources = job.ResourcesFor(role);
        layout.pods.push_back(std::move(p));
      }
    }
  }
  layout.nodes.push_back({layout.node_name, layout.bridge, "", "", "", 0});
  if (!scenario.nodes.empty()) PlaceOnNodes(scenario, &layout);
  return layout;
}

}  // namespace trainsim
