#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace trainscope {

// The cluster report's `lost_time` (cli/report_lost_time.h) as text for
// `trainscope report`: one line with the range's lost time, largest cause
// first ("This range: 14.2 h lost, 9.1 h training_stalled, ..."), then one
// line per job that lost time, lowest goodput first. Empty when the report
// has no such section (a node view). Never throws on mistyped fields.
std::string LostTimeText(const nlohmann::json& report);

// Seconds in the unit that fits: "42 s", "12.5 min", "14.2 h".
std::string DurationText(double seconds);

}  // namespace trainscope
