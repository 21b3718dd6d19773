#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "layout.h"

namespace trainsim {

// The request bodies trainsim sends a real API server when it plays the
// kubelet (kube_cluster_api.cc). Pure, so tests pin them.

// POST body of a pod (from PodJson): no status (the server ignores it on
// create) and none of the fields the server owns (uid, resourceVersion,
// creationTimestamp).
nlohmann::json PodCreateBody(const nlohmann::json& pod);
// The merge patch of pods/<name>/status: the status as the kubelet writes it.
nlohmann::json PodStatusPatch(const nlohmann::json& pod);
// A merge patch of the pod's labels and annotations from `before` to
// `after` (removed keys as null); nullopt when neither changed.
std::optional<nlohmann::json> PodMetadataPatch(const nlohmann::json& before,
                                               const nlohmann::json& after);
// A strategic merge patch of pods/<name>/resize (in-place resize: the only
// way to change a running pod's resources) when a container's resources
// changed; nullopt otherwise.
std::optional<nlohmann::json> PodResizePatch(const nlohmann::json& before,
                                             const nlohmann::json& after);

// The Node object of the layout's node `k` (POST body) and the status its
// kubelet would post (merge patch of nodes/<name>/status).
nlohmann::json NodeCreateBody(const Layout& layout, int k);
nlohmann::json NodeStatusPatch(const Layout& layout, int k,
                               const std::string& now_rfc3339);

// The TokenRequest body for a token valid `seconds`.
nlohmann::json TokenRequestBody(int64_t seconds);

}  // namespace trainsim
