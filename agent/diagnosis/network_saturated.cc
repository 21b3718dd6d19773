// network_saturated: gradients and variables saturate a 1 GbE link long
// before CPUs run out; the shaped capacity (bandwidth annotations) is the
// link that counts when it is the smaller one.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "diagnosis/detectors.h"
#include "diagnosis/impact.h"

namespace trainscope::diagnosis {
namespace {

// The share of the step spent exchanging over this link (a PS: the time its
// workers exchange with it; a worker: its own exchange time), of which the
// part beyond the pace of the job's other links is what a link with room
// gives back. docs/diagnosis.md, "Cost and expected speed-up".
// A shaped PS link against the job's other PS links, all shaped (their
// bandwidth annotations, in the direction that is full here): capacity
// elsewhere over capacity here, the pace ratio a link as fast as the others
// gives. Exact where the links are what bounds the exchanges, where the
// bursts' paces scatter by 10-20% between equal links (on balanced
// saturated links that read as a gap). Empty unless every other PS of the
// job in view has an annotation.
std::optional<double> ShapedPsCapacityRatio(const DetectorInput& in,
                                            const std::string& key,
                                            const PodStats& pod, bool receive) {
  auto capacity = [receive](const PodStats& p) -> std::optional<double> {
    const auto& c = receive ? p.meta.ingress_limit_bytes_per_second
                            : p.meta.egress_limit_bytes_per_second;
    if (c && *c > 0) return *c;
    return std::nullopt;
  };
  const auto here = capacity(pod);
  if (!here) return std::nullopt;
  std::vector<double> others;
  for (const auto& [k, p] : in.recent.pods) {
    if (k == key || p.meta.role != Role::kPs ||
        p.meta.namespace_name != pod.meta.namespace_name ||
        p.meta.training_job != pod.meta.training_job)
      continue;
    const auto c = capacity(p);
    if (!c) return std::nullopt;
    others.push_back(*c);
  }
  if (others.empty()) return std::nullopt;
  return *here / Median(others);
}

void SetPodLinkImpact(const DetectorInput& in, const std::string& key,
                      const PodStats& pod, double utilization, bool receive,
                      Diagnosis& d) {
  const bool ps = pod.meta.role == Role::kPs;
  // A PS: the time its workers wait on it, which on a saturated link is
  // more than their exchange bursts (WorkerWaitShare).
  std::optional<double> busy;
  if (ps) {
    if (auto wait = WorkerWaitShare(in.recent, pod.meta, key, utilization)) {
      busy = wait->share;
      if (wait->raised) d.evidence["worker_wait_share"] = Round4(wait->share);
    }
  } else {
    busy = PodExchangeShare(in.recent, key);
  }
  if (!busy) {
    SetImpact(d, std::min(1.0, utilization), "link_utilization_upper_bound");
    return;
  }
  d.evidence["exchange_share"] = Round4(*busy);
  std::optional<double> here, elsewhere;
  if (ps) {
    if (auto ratio = ShapedPsCapacityRatio(in, key, pod, receive)) {
      d.evidence["capacity_ratio"] = Round4(*ratio);
      SetImpact(d, *busy * std::max(0.0, 1 - *ratio),
                "exchange_share_x_capacity_gap");
      return;
    }
    if (auto pace = PeerExchangePace(in.recent, pod.meta, key)) {
      here = pace->this_peer;
      elsewhere = pace->other_peers;
    }
  } else {
    here = PodExchangePace(pod);
    std::vector<double> others;
    for (const auto& [k, p] : in.recent.pods) {
      if (k == key || p.meta.training_job != pod.meta.training_job ||
          p.meta.namespace_name != pod.meta.namespace_name ||
          !RunsTrainingSteps(p.meta.role))
        continue;
      if (auto pace = PodExchangePace(p)) others.push_back(*pace);
    }
    if (!others.empty()) elsewhere = Median(others);
  }
  if (here && elsewhere && *here > 0) {
    d.evidence["exchange_pace_ratio"] = Round4(*elsewhere / *here);
    SetImpact(d, *busy * std::max(0.0, 1 - *elsewhere / *here),
              "exchange_share_x_pace_gap");
    return;
  }
  SetImpact(d, *busy, "exchange_share_upper_bound");
}

void DetectPodLinks(const DetectorInput& in, const NetworkSettings& s,
                    std::vector<Finding>& out) {
  for (const auto& [key, pod] : in.recent.pods) {
    // One finding per pod: the fuller direction speaks for the link.
    std::optional<LinkUse> worst;
    bool receive = false;
    for (bool rx : {true, false}) {
      auto use = LinkUtilization(pod, rx);
      if (use && (!worst || use->ratio > worst->ratio)) {
        worst = use;
        receive = rx;
      }
    }
    if (!worst || worst->ratio < s.exit_ratio) continue;
    Finding f;
    f.level = worst->ratio >= s.enter_ratio ? Finding::Level::kEnter
                                            : Finding::Level::kHold;
    f.diagnosis = NewDiagnosis(kNetworkSaturated, Severity::kWarning, pod.meta);
    const char* direction = receive ? "receive" : "transmit";
    f.diagnosis.evidence = {
        {"direction", direction},
        {"bytes_per_second", Round4(worst->bytes_per_second)},
        {"capacity_bytes_per_second", Round4(worst->capacity_bytes_per_second)},
        {"utilization_ratio", Round4(worst->ratio)},
        {"capacity_source",
         worst->shaped ? "bandwidth_annotation" : "node_nic"}};
    SetPodLinkImpact(in, key, pod, worst->ratio, receive, f.diagnosis);
    f.diagnosis.summary = fmt::format(
        "{} {}s {:.1f} Mbit/s, {:.0f}% of its {:.0f} Mbit/s {}.", pod.meta.pod,
        direction, worst->bytes_per_second * 8 / 1e6, worst->ratio * 100,
        worst->capacity_bytes_per_second * 8 / 1e6,
        worst->shaped ? "bandwidth limit" : "node link");
    if (worst->shaped) {
      f.diagnosis.recommendations.push_back(fmt::format(
          "Raise or remove the kubernetes.io/{}-bandwidth annotation of {}.",
          receive ? "ingress" : "egress", pod.meta.pod));
    } else {
      f.diagnosis.recommendations.push_back(fmt::format(
          "Spread the job's PS and workers over more nodes (pod "
          "anti-affinity) so {}'s node link is not shared, or use faster "
          "NICs (10/25 GbE).",
          pod.meta.pod));
    }
    f.diagnosis.recommendations.push_back(
        "Cut the bytes per step: larger batches per step, gradient "
        "compression or fp16 gradients, and partitioned variables so the "
        "traffic spreads over all PS links.");
    out.push_back(std::move(f));
  }
}

struct PodOnLink {
  const PodStats* pod;
  double bytes_per_second;
};

// The figures of one node's link in its fuller direction.
struct NodeLinkFigures {
  std::string node;
  bool receive = false;
  double bytes_per_second = 0;
  double capacity_bytes_per_second = 0;
};

// A pod's share of a node link, as listed in the evidence.
struct PodOnNodeLink {
  std::string namespace_name;
  std::string pod;
  std::string training_job;
  double bytes_per_second = 0;
};

// `cost`: the largest exchange share among the pods on the link (each of
// them waits on it that much of its time; an upper bound), else the link's
// utilization.
Diagnosis NodeLinkDiagnosis(const NodeLinkFigures& link,
                            const std::vector<PodOnNodeLink>& pods,
                            std::optional<double> cost) {
  const double speed = link.capacity_bytes_per_second;
  const double ratio = link.bytes_per_second / speed;
  Diagnosis d;
  d.kind = std::string(kNetworkSaturated);
  d.node = link.node;
  // One job filling the link owns the diagnosis; several share it.
  std::set<std::pair<std::string, std::string>> jobs;
  for (const auto& p : pods) jobs.insert({p.namespace_name, p.training_job});
  if (jobs.size() == 1) {
    d.namespace_name = jobs.begin()->first;
    d.training_job = jobs.begin()->second;
  }
  const char* direction = link.receive ? "receive" : "transmit";
  nlohmann::json listed = nlohmann::json::array();
  std::string names;
  for (const auto& p : pods) {
    listed.push_back({{"namespace", p.namespace_name},
                      {"pod", p.pod},
                      {"training_job", p.training_job},
                      {"bytes_per_second", Round4(p.bytes_per_second)},
                      {"link_share", Round4(p.bytes_per_second / speed)}});
    if (!names.empty()) names += ", ";
    names +=
        fmt::format("{} ({:.0f}%)", p.pod, p.bytes_per_second / speed * 100);
  }
  d.evidence = {{"scope", "node"},
                {"direction", direction},
                {"bytes_per_second", Round4(link.bytes_per_second)},
                {"capacity_bytes_per_second", Round4(speed)},
                {"utilization_ratio", Round4(ratio)},
                {"capacity_source", "node_nic"},
                {"pods", listed}};
  if (cost) {
    SetImpact(d, *cost, "exchange_share_upper_bound");
  } else {
    SetImpact(d, std::min(1.0, ratio), "link_utilization_upper_bound");
  }
  d.summary = fmt::format(
      "Node {}'s link {}s {:.1f} Mbit/s, {:.0f}% of its {:.0f} Mbit/s, "
      "filled by several pods{}{}.",
      link.node, direction, link.bytes_per_second * 8 / 1e6, ratio * 100,
      speed * 8 / 1e6, names.empty() ? "" : ": ", names);
  d.recommendations.push_back(fmt::format(
      "Spread the pods that share {}'s link over more nodes "
      "(topologySpreadConstraints or pod anti-affinity on "
      "kubernetes.io/hostname), PS of one job on different nodes first.",
      link.node));
  d.recommendations.push_back(
      "Partition large variables over all PS so no node carries most of "
      "the job's PS traffic; cut bytes per step (fp16 or compressed "
      "gradients, larger batches).");
  d.recommendations.push_back(
      "Use faster NICs (10/25 GbE) for nodes that host parameter servers.");
  return d;
}

// The node's link is full but no pod alone fills it (that is the pod-level
// finding): name the node and the pods that share it.
void DetectNodeLink(const DetectorInput& in, const NetworkSettings& s,
                    const std::string& node, const NodeStats& link,
                    std::vector<Finding>& out) {
  const auto fuller = NodeLinkUtilization(link);
  if (!fuller) return;
  const double speed = fuller->capacity_bytes_per_second;
  const double worst_rate = fuller->bytes_per_second;
  const bool receive = fuller->receive;
  const double ratio = fuller->ratio;
  if (ratio < s.exit_ratio) return;
  std::vector<PodOnLink> pods;
  for (const auto& [key, pod] : in.recent.pods) {
    if (pod.meta.node != node) continue;
    if (auto use = LinkUtilization(pod, receive);
        use && !use->shaped && use->ratio >= s.enter_ratio) {
      return;  // one pod fills the link: its own finding says it
    }
    const double rate = OnLinkRate(in.recent, pod, receive, worst_rate);
    if (rate > 0) pods.push_back({&pod, rate});
  }
  std::sort(pods.begin(), pods.end(), [](const auto& a, const auto& b) {
    return a.bytes_per_second > b.bytes_per_second;
  });
  if (pods.size() > s.node_pods_listed) pods.resize(s.node_pods_listed);

  std::vector<PodOnNodeLink> listed;
  std::optional<double> cost;
  for (const auto& p : pods) {
    listed.push_back({p.pod->meta.namespace_name, p.pod->meta.pod,
                      p.pod->meta.training_job, p.bytes_per_second});
    const auto busy = PodExchangeShare(
        in.recent, PodKey(p.pod->meta.namespace_name, p.pod->meta.pod));
    if (busy) cost = std::max(cost.value_or(0), *busy);
  }
  Finding f;
  f.level =
      ratio >= s.enter_ratio ? Finding::Level::kEnter : Finding::Level::kHold;
  f.diagnosis =
      NodeLinkDiagnosis({node, receive, worst_rate, speed}, listed, cost);
  out.push_back(std::move(f));
}

}  // namespace

void DetectNetworkSaturated(const DetectorInput& in, const NetworkSettings& s,
                            std::vector<Finding>& out) {
  DetectPodLinks(in, s, out);
  for (const auto& [node, link] : in.recent.nodes) {
    DetectNodeLink(in, s, node, link, out);
  }
}

}  // namespace trainscope::diagnosis

namespace trainscope::diagnosis {
namespace {

bool IsNodeLinkDiagnosis(const Diagnosis& d) {
  return d.kind == kNetworkSaturated && d.pod.empty() && !d.node.empty();
}

// A pod-level finding on the node's own NIC: one pod fills the link.
bool IsPodOnNodeNic(const Diagnosis& d) {
  return d.kind == kNetworkSaturated && !d.pod.empty() &&
         d.evidence.value("capacity_source", "") == "node_nic";
}

NodeLinkFigures FiguresOf(const Diagnosis& d) {
  return {d.node, d.evidence.value("direction", "") == "receive",
          d.evidence.value("bytes_per_second", 0.0),
          d.evidence.value("capacity_bytes_per_second", 0.0)};
}

std::vector<PodOnNodeLink> PodsOf(const Diagnosis& d) {
  std::vector<PodOnNodeLink> pods;
  const auto listed = d.evidence.find("pods");
  if (listed == d.evidence.end() || !listed->is_array()) return pods;
  for (const auto& p : *listed) {
    pods.push_back({p.value("namespace", ""), p.value("pod", ""),
                    p.value("training_job", ""),
                    p.value("bytes_per_second", 0.0)});
  }
  return pods;
}

}  // namespace

std::vector<Diagnosis> MergeNodeLinkDiagnoses(std::vector<Diagnosis> all,
                                              const NetworkSettings& s) {
  std::set<std::string> filled_by_one_pod;
  std::map<std::string, std::vector<const Diagnosis*>> by_node;
  for (const auto& d : all) {
    if (IsPodOnNodeNic(d)) filled_by_one_pod.insert(d.node);
    if (IsNodeLinkDiagnosis(d)) by_node[d.node].push_back(&d);
  }
  std::vector<Diagnosis> merged;
  for (const auto& [node, parts] : by_node) {
    if (filled_by_one_pod.count(node)) continue;
    std::vector<PodOnNodeLink> pods;
    std::set<std::pair<std::string, std::string>> seen;
    auto since = parts.front()->since;
    std::optional<double> cost;
    for (const Diagnosis* d : parts) {
      since = std::min(since, d->since);
      if (d->evidence.value("cost_model", "") == "exchange_share_upper_bound")
        cost =
            std::max(cost.value_or(0), d->evidence.value("cost_fraction", 0.0));
      for (auto& p : PodsOf(*d)) {
        if (seen.insert({p.namespace_name, p.pod}).second) {
          pods.push_back(std::move(p));
        }
      }
    }
    std::stable_sort(pods.begin(), pods.end(),
                     [](const auto& a, const auto& b) {
                       return a.bytes_per_second > b.bytes_per_second;
                     });
    if (pods.size() > s.node_pods_listed) pods.resize(s.node_pods_listed);
    Diagnosis d = NodeLinkDiagnosis(FiguresOf(*parts.front()), pods, cost);
    d.since = since;
    merged.push_back(std::move(d));
  }
  std::erase_if(all, IsNodeLinkDiagnosis);
  all.insert(all.end(), std::make_move_iterator(merged.begin()),
             std::make_move_iterator(merged.end()));
  return all;
}

}  // namespace trainscope::diagnosis
