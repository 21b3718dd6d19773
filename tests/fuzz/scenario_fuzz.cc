// A trainsim scenario file: parsed and validated, or refused with a
// ScenarioError naming the field. Any other exception is a bug.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)trainsim::ParseScenarioText(text);
  } catch (const trainsim::ScenarioError&) {
  }
  return 0;
}
