// A PodList body (GET /api/v1/pods, a pod file) through the parser and the
// training-identity inference every discovery source applies: role labels,
// TF_CONFIG, MX_CONFIG and the environment come from the pod spec.

#include <cstddef>
#include <cstdint>
#include <string>

#include "discovery/pod_json.h"
#include "discovery/roles.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainscope;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  PodList pods;
  std::string resource_version, continue_token;
  if (!ParsePodList(body, &pods, &resource_version, &continue_token).ok()) {
    return 0;
  }
  PreparePodsForPublish(std::move(pods), DefaultLabelSchemes());
  return 0;
}
