#include "discovery/peer_pod_source.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace trainscope {
namespace {

bool IsDns1123Label(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  auto ok = [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c)) || c == '-';
  };
  return std::all_of(name.begin(), name.end(), ok) && name.front() != '-' &&
         name.back() != '-';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

}  // namespace

std::string ResolvePeerPodSelectors(std::string_view text,
                                    const std::vector<LabelScheme>& schemes) {
  text = Trim(text);
  if (text != kAutoPeerSelector) return std::string(text);
  std::string values;
  for (std::string_view v : RoleLabelValues()) {
    if (!values.empty()) values += ",";
    values += v;
  }
  std::string out;
  std::set<std::string> keys;
  for (const auto& scheme : schemes) {
    if (scheme.role_key.empty() || !keys.insert(scheme.role_key).second) {
      continue;
    }
    if (!out.empty()) out += ";";
    out += scheme.role_key + " in (" + values + ")";
  }
  return out;
}

std::vector<PodsQuery> PeerPodQueries(
    const std::string& label_selectors,
    const std::vector<std::string>& namespaces) {
  std::vector<std::string> selectors;
  std::set<std::string> seen_selectors;
  for (std::string_view rest = label_selectors; !rest.empty();) {
    const size_t semi = rest.find(';');
    std::string item(Trim(rest.substr(0, semi)));
    rest = semi == std::string_view::npos ? std::string_view()
                                          : rest.substr(semi + 1);
    if (!item.empty() && seen_selectors.insert(item).second) {
      selectors.push_back(std::move(item));
    }
  }
  std::vector<std::string> scopes;  // namespaces; "" = cluster-wide
  std::set<std::string> seen;
  for (const auto& ns : namespaces) {
    if (!ns.empty() && seen.insert(ns).second) scopes.push_back(ns);
  }
  std::vector<PodsQuery> out;
  if (scopes.empty()) {
    for (const auto& sel : selectors) out.push_back({"", "", sel});
    return out;
  }
  if (selectors.empty()) selectors.push_back("");
  for (const auto& ns : scopes) {
    for (const auto& sel : selectors) out.push_back({"", ns, sel});
  }
  return out;
}

Status ParseNamespaceList(std::string_view text,
                          std::vector<std::string>* out) {
  out->clear();
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view item = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view()
                                           : text.substr(comma + 1);
    if (item.empty()) continue;
    if (!IsDns1123Label(item)) {
      return Status::Error("namespace \"" + std::string(item) +
                           "\" is not a valid name (lowercase letters, "
                           "digits and '-', at most 63)");
    }
    out->emplace_back(item);
  }
  return Status::Ok();
}

PeerPodSource::PeerPodSource(const ApiServerSourceOptions& base,
                             std::vector<PodsQuery> queries, PodTable& table)
    : table_(table), parts_(queries.size()) {
  for (size_t i = 0; i < queries.size(); ++i) {
    ApiServerSourceOptions o = base;
    o.node_name = queries[i].node_name;
    o.namespace_name = queries[i].namespace_name;
    o.label_selector = queries[i].label_selector;
    o.log_name = "peer pods";
    o.identity_only = true;
    sources_.push_back(std::make_unique<ApiServerSource>(
        std::move(o), [this, i](PodList pods) { Merge(i, std::move(pods)); }));
  }
}

PeerPodSource::~PeerPodSource() { Stop(); }

Status PeerPodSource::Start() {
  if (sources_.empty()) {
    return Status::Error("peer pods: no selector or namespace to watch");
  }
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (Status st = sources_[i]->Start(); !st.ok()) {
      for (size_t j = 0; j < i; ++j) sources_[j]->Stop();
      return Status::Error("peer pods: " + st.message());
    }
  }
  return Status::Ok();
}

void PeerPodSource::Stop() {
  for (auto& source : sources_) source->Stop();
}

DiscoveryStats PeerPodSource::stats() const {
  DiscoveryStats out;
  out.ready = !sources_.empty();
  bool first = true;
  for (const auto& source : sources_) {
    const DiscoveryStats s = source->stats();
    out.ready = out.ready && s.ready;
    out.errors_total += s.errors_total;
    out.last_success_unix_seconds =
        first ? s.last_success_unix_seconds
              : std::min(out.last_success_unix_seconds,
                         s.last_success_unix_seconds);
    first = false;
  }
  return out;
}

void PeerPodSource::Merge(size_t index, PodList pods) {
  std::lock_guard lock(mu_);
  parts_[index] = std::move(pods);
  PodList merged;
  std::set<std::string> uids;
  for (const auto& part : parts_) {
    for (const auto& pod : part) {
      if (uids.insert(pod.uid).second) merged.push_back(pod);
    }
  }
  table_.Replace(std::move(merged));
}

}  // namespace trainscope
