#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace trainscope::diagnosis {

// The catalog of DESIGN.md; the strings are a contract with test suites
// outside this repository, so they live in one place.
inline constexpr std::string_view kHotParameterServer = "hot_parameter_server";
inline constexpr std::string_view kPsCpuSaturated =
    "parameter_server_cpu_saturated";
inline constexpr std::string_view kStragglerWorker = "straggler_worker";
inline constexpr std::string_view kCpuThrottled = "cpu_throttled";
inline constexpr std::string_view kNetworkSaturated = "network_saturated";
inline constexpr std::string_view kMemoryPressure = "memory_pressure";
inline constexpr std::string_view kInputIoBound = "input_io_bound";
inline constexpr std::string_view kGpuUnderutilized = "gpu_underutilized";
inline constexpr std::string_view kAllreduceStraggler = "allreduce_straggler";
inline constexpr std::string_view kAllreduceSlowLink = "allreduce_slow_link";
inline constexpr std::string_view kPodRestarting = "pod_restarting";
inline constexpr std::string_view kTrainingStalled = "training_stalled";
inline constexpr std::string_view kGpuError = "gpu_error";
// Kinds judged by comparing a job's pods with each other (their detectors
// need the whole job in the window); the others judge one pod or one node.
// From the detector registry (detectors.cc).
bool JudgesWholeJob(std::string_view kind);

enum class Severity { kInfo, kWarning, kCritical };
std::string_view SeverityName(Severity severity);

struct Diagnosis {
  std::string kind;
  Severity severity = Severity::kWarning;
  std::string namespace_name;
  std::string training_job;
  std::string pod;
  // The pod's node, or for a node-level diagnosis (pod empty) the node
  // itself.
  std::string node;
  // When the diagnosis entered (set by the engine, not by detectors).
  std::chrono::system_clock::time_point since{};
  std::string summary;
  nlohmann::json evidence = nlohmann::json::object();
  std::vector<std::string> recommendations;
};

// What a detector says about one (kind, pod) in one window. Detectors only
// emit a finding while the value is at or beyond the exit threshold; the
// engine reads "no finding" as "below exit".
struct Finding {
  enum class Level {
    kEnter,  // at or beyond the enter threshold
    kHold,   // between the exit and the enter threshold
    // Something the API reported happened (a restart): no threshold a
    // noisy rate crosses, so it enters at its first window.
    kEvent,
  };
  Level level = Level::kEnter;
  Diagnosis diagnosis;
};

// Identity of a diagnosis across windows.
std::string DiagnosisKey(const Diagnosis& d);

// The report's order: training_stalled first (critical, then warning), then
// the largest expected gain (evidence.expected_speedup), then the most
// severe, then by kind, namespace, pod and node.
void SortByExpectedGain(std::vector<Diagnosis>& diagnoses);

// The DESIGN.md report entry (`since` in RFC 3339).
nlohmann::json DiagnosisJson(const Diagnosis& d);

}  // namespace trainscope::diagnosis
