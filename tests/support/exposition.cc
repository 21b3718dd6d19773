#include "exposition.h"

#include <sstream>

namespace trainscope::testing {

std::optional<double> MetricValue(const std::string& exposition,
                                  const std::string& metric,
                                  const std::vector<std::string>& labels) {
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(metric + "{", 0) != 0 && line.rfind(metric + " ", 0) != 0) {
      continue;
    }
    bool all = true;
    for (const auto& l : labels) all = all && line.find(l) != std::string::npos;
    if (all) return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return std::nullopt;
}

}  // namespace trainscope::testing
