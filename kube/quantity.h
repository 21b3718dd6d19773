#pragma once

#include <optional>
#include <string_view>

namespace trainscope {

// A Kubernetes resource.Quantity ("500m", "1.5", "512Mi", "1G", "1e9") as a
// plain number in base units. Empty for malformed or negative text. The one
// parser of quantities: resources, and the bandwidth annotations below.
std::optional<double> ParseQuantity(std::string_view text);

// The annotations the CNI bandwidth plugin reads to shape a pod's traffic
// (the pod's ingress = what it receives).
inline constexpr std::string_view kIngressBandwidthAnnotation =
    "kubernetes.io/ingress-bandwidth";
inline constexpr std::string_view kEgressBandwidthAnnotation =
    "kubernetes.io/egress-bandwidth";

// One of those annotations (a quantity in bits per second, as the plugin
// reads it: "10M" = 10 Mbit/s, "1Gi" = 2^30 bit/s; surrounding spaces
// allowed) in bytes per second. Empty when the text is no quantity or one
// the kubelet refuses: outside 1k .. 1P bits per second.
inline constexpr double kMinBandwidthBitsPerSecond = 1e3;
inline constexpr double kMaxBandwidthBitsPerSecond = 1e15;
std::optional<double> ParseBandwidthAnnotation(std::string_view text);

}  // namespace trainscope
