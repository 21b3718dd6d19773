#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/api_endpoint.h"
#include "discovery/apiserver_source.h"
#include "discovery/pod_source.h"
#include "trainscope/pod.h"
#include "trainscope/status.h"

namespace trainscope {

// The --peer-pods-selector value that derives the selectors from the role
// label schemes (the default).
inline constexpr std::string_view kAutoPeerSelector = "auto";

// "auto" -> one set-based selector per distinct role label key of the
// schemes, naming every known role value
// ("training.kubeflow.org/replica-type in (chief,evaluator,master,ps,worker)");
// anything else ("" = no label restriction) is returned as given. "off"
// (no watch at all) is the factory's to handle.
std::string ResolvePeerPodSelectors(std::string_view text,
                                    const std::vector<LabelScheme>& schemes);

// The list/watch queries of the peer-pod watch. `label_selectors` holds
// Kubernetes label selectors separated by ';' (a pod matching any of them is
// a peer; commas inside one selector AND its terms, as in Kubernetes). With
// selectors, the matching pods cluster-wide (or in each namespace when
// namespaces are given too, for agents whose RBAC is namespace-scoped);
// without, every pod of each namespace. None when both are empty (the watch
// is off). Duplicates are asked once.
std::vector<PodsQuery> PeerPodQueries(
    const std::string& label_selectors,
    const std::vector<std::string>& namespaces);

// "ns1, ns2" -> {"ns1", "ns2"}; empty items are skipped. Each name must be a
// DNS-1123 label (what Kubernetes allows for namespaces).
Status ParseNamespaceList(std::string_view text, std::vector<std::string>* out);

// Peer pods: training pods on any node, so that flows can name peers that
// run elsewhere (apiserver discovery otherwise only knows this node's pods).
// One ApiServerSource per query, all publishing into one merged table that is
// separate from the node's pod table: peer pods only name peers, they never
// get pod-level series.
class PeerPodSource : public PodSource {
 public:
  PeerPodSource(const ApiServerSourceOptions& base,
                std::vector<PodsQuery> queries, PodTable& table);
  ~PeerPodSource() override;

  std::string_view name() const override { return "apiserver-peers"; }
  Status Start() override;
  void Stop() override;
  // Ready when every watch has listed; errors summed; the oldest last
  // success (the staleness of the least fresh part).
  DiscoveryStats stats() const override;

 private:
  void Merge(size_t index, PodList pods);

  PodTable& table_;
  std::mutex mu_;
  std::vector<PodList> parts_;  // per query, guarded by mu_
  std::vector<std::unique_ptr<ApiServerSource>> sources_;
};

}  // namespace trainscope
