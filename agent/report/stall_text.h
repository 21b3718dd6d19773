#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainscope {

// The per-rank table of a training_stalled diagnosis (evidence.ranks, see
// docs/diagnosis.md) as aligned text columns for `trainscope report`: pod,
// node, role, process state, CPU, how long the rank has been quiet, its
// transmit and receive rates and the peer it waits on; the suspect rank is
// marked "*". Every line starts with `indent`. Empty when the evidence holds
// no ranks. Never throws on mistyped fields (they print as "-").
std::string StallRanksText(const nlohmann::json& evidence,
                           const std::string& indent);

// The report's diagnoses with training_stalled first (critical, then
// warning), the others after them in their order: the order
// diagnosis::SortByExpectedGain gives, kept for a report that came in
// another order (a saved file, an older agent).
std::vector<const nlohmann::json*> StallsFirst(const nlohmann::json& diagnoses);

}  // namespace trainscope
