#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainscope::testing {

// The value of `metric` in a Prometheus text exposition, on the first line
// that carries every `labels` fragment (e.g. "pod=\"a\""); with no
// fragments, the first sample of `metric`, labelled or not.
std::optional<double> MetricValue(const std::string& exposition,
                                  const std::string& metric,
                                  const std::vector<std::string>& labels);

}  // namespace trainscope::testing
