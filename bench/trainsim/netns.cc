#include "netns.h"

#include <net/if.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "exec.h"

namespace trainsim {
namespace fs = std::filesystem;
namespace {

// Links of a run: ts<run>br, ts<run>h<n>, ts<run>p<n> (IFNAMSIZ-safe);
// a cluster adds ts<run>fb (fabric), ts<run>b<k> (node bridges) and the
// uplink pairs ts<run>n<k>u / ts<run>n<k>f.
const std::regex kLinkName(
    "^ts([0-9a-f]{8})(br|fb|b[0-9]+|n[0-9]+[uf]|h[0-9]+|p[0-9]+)$");
const std::regex kNetnsName("^trainsim-([0-9a-f]{8})-.+$");

std::vector<std::string> Netnses() {
  std::vector<std::string> out;
  CommandResult r = RunCommand({"ip", "netns", "list"});
  std::istringstream s(r.output);
  for (std::string line; std::getline(s, line);) {
    std::string name = line.substr(0, line.find(' '));
    if (!name.empty()) out.push_back(name);
  }
  return out;
}

std::vector<std::string> Links() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/class/net", ec))
    out.push_back(e.path().filename().string());
  return out;
}

std::string Tbf(double mbit) {
  // Burst must hold at least one timer tick of traffic at this rate.
  const double bytes_per_s = mbit * 1e6 / 8;
  const long burst =
      std::max<long>(32 * 1024, static_cast<long>(bytes_per_s / 100));
  return std::to_string(burst);
}

}  // namespace

std::string NetnsPath(const std::string& netns) {
  return "/run/netns/" + netns;
}

void CreateBridge(const std::string& name) {
  static_assert(IFNAMSIZ == 16);
  MustRun({"ip", "link", "add", name, "type", "bridge"});
  MustRun({"ip", "link", "set", name, "addrgenmode", "none"});
  MustRun({"ip", "link", "set", name, "up"});
}

void CreateBridge(const Layout& layout) { CreateBridge(layout.bridge); }

void CreatePodNetwork(const Layout& layout, const SimPod& pod) {
  const std::string& ns = pod.netns;
  MustRun({"ip", "netns", "add", ns});
  MustRun({"ip", "link", "add", pod.host_veth, "type", "veth", "peer", "name",
           pod.peer_veth});
  MustRun({"ip", "link", "set", pod.peer_veth, "netns", ns});
  MustRun({"ip", "link", "set", pod.host_veth, "addrgenmode", "none"});
  MustRun({"ip", "link", "set", pod.host_veth, "master",
           layout.NodeOf(pod).bridge});
  MustRun({"ip", "link", "set", pod.host_veth, "up"});
  MustRun({"ip", "-n", ns, "link", "set", pod.peer_veth, "name", "eth0"});
  MustRun({"ip", "-n", ns, "link", "set", "eth0", "addrgenmode", "none"});
  MustRun({"ip", "-n", ns, "addr", "add",
           pod.ip + "/" + std::to_string(kPrefixLen), "dev", "eth0"});
  MustRun({"ip", "-n", ns, "link", "set", "lo", "up"});
  MustRun({"ip", "-n", ns, "link", "set", "eth0", "up"});
}

void ShapeEgress(const std::string& dev, double mbit) {
  MustRun({"tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate",
           std::to_string(mbit) + "mbit", "burst", Tbf(mbit), "latency",
           "100ms"});
}

void LimitBandwidth(const SimPod& pod, double mbit) {
  const std::string rate = std::to_string(mbit) + "mbit";
  MustRun({"tc", "qdisc", "replace", "dev", pod.host_veth, "root", "tbf",
           "rate", rate, "burst", Tbf(mbit), "latency", "100ms"});
  MustRun({"tc", "-n", pod.netns, "qdisc", "replace", "dev", "eth0", "root",
           "tbf", "rate", rate, "burst", Tbf(mbit), "latency", "100ms"});
}

std::vector<std::string> RemoveRunNetwork(const std::string& run_id) {
  std::vector<std::string> left;
  std::smatch m;
  // Deleting a netns destroys its eth0 and with it the host-side peer.
  for (const std::string& ns : Netnses()) {
    if (!std::regex_match(ns, m, kNetnsName) || m[1] != run_id) continue;
    CommandResult r = RunCommand({"ip", "netns", "delete", ns});
    if (r.exit_code != 0) left.push_back("netns " + ns + ": " + r.output);
  }
  for (const std::string& link : Links()) {
    if (!std::regex_match(link, m, kLinkName) || m[1] != run_id) continue;
    CommandResult r = RunCommand({"ip", "link", "delete", link});
    if (r.exit_code != 0 && fs::exists("/sys/class/net/" + link))
      left.push_back("link " + link + ": " + r.output);
  }
  return left;
}

std::vector<std::string> RunIdsInNetwork() {
  std::set<std::string> ids;
  std::smatch m;
  for (const std::string& ns : Netnses())
    if (std::regex_match(ns, m, kNetnsName)) ids.insert(m[1]);
  for (const std::string& link : Links())
    if (std::regex_match(link, m, kLinkName)) ids.insert(m[1]);
  return {ids.begin(), ids.end()};
}

}  // namespace trainsim
