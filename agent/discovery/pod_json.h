#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "trainscope/pod.h"
#include "trainscope/status.h"

namespace trainscope {

// One Pod object of the core/v1 API into PodInfo. Only uid and name are
// required; a field of the wrong JSON type is an error naming the field.
// Training identity (job, role, index) is left for roles.h.
Status ParsePod(const nlohmann::json& pod, PodInfo* out);

// A PodList (the body of GET /api/v1/pods, or a pod file). Any bad item
// fails the whole list, naming the item index, so a half-parsed list never
// replaces a good one. resource_version may be null.
// `continue_token` (optional) receives metadata.continue: "" on the last
// page of a paginated list (limit=N).
Status ParsePodList(std::string_view body, PodList* out,
                    std::string* resource_version,
                    std::string* continue_token = nullptr);
Status ParsePodListJson(const nlohmann::json& list, PodList* out,
                        std::string* resource_version,
                        std::string* continue_token = nullptr);

// "containerd://abc" -> {"containerd", "abc"}; a bare id has no runtime.
// CRI-O reports "cri-o://".
void SplitContainerId(std::string_view container_id, std::string* runtime,
                      std::string* id);

}  // namespace trainscope
