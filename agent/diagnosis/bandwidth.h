#pragma once

#include <optional>
#include <string_view>

namespace trainscope::diagnosis {

// A kubernetes.io/ingress-bandwidth or egress-bandwidth annotation (a
// resource.Quantity in bits per second, as the CNI bandwidth plugin reads
// it: "10M" = 10 Mbit/s, "1Gi" = 2^30 bit/s) in bytes per second. Empty when
// the text is no positive quantity.
std::optional<double> ParseBandwidthAnnotation(std::string_view text);

}  // namespace trainscope::diagnosis
