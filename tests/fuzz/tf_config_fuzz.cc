// The environment and flags that name a pod's training role: a pod name
// (first line), then TF_CONFIG / MX_CONFIG JSON, which is also read as a
// --role-labels value.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "discovery/roles.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainscope;
  fuzz::FuzzInput input(data, size);
  const std::string_view pod_name = input.Line();
  const std::string_view config = input.Rest();
  TrainingIdentity id;
  (void)ParsePodNamePattern(pod_name, &id);
  (void)ParseTfConfig(config, pod_name, &id);
  (void)ParseMxConfig(config, pod_name, &id);
  std::vector<LabelScheme> schemes;
  (void)ParseLabelSchemes(config, &schemes);
  return 0;
}
