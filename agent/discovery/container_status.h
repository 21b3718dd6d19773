#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "trainscope/pod.h"

namespace trainscope {

// The kubelet's state of one container (an item of
// status.containerStatuses) into `out`: restartCount, state.running /
// state.waiting, lastState.terminated. `path` names the item in errors. A
// member of the wrong type is an error naming it; a timestamp that is not
// RFC 3339 is left unknown (the kubelet wrote it, a clock skew is no reason
// to drop the pod).
bool ParseContainerState(const nlohmann::json& status, const std::string& path,
                         ContainerInfo* out, std::string* error);

}  // namespace trainscope
