#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "test_platform.h"

namespace trainscope::testing {

// A pod of training job `real` (Kubeflow labels) in namespace `training`,
// bound to `node` as the scheduler would have bound it.
nlohmann::json TrainingPod(const std::string& name, const std::string& node,
                           const std::string& role, int index);
// A v1 List of `items`, for one `kubectl apply/create`.
nlohmann::json KubeList(const std::vector<nlohmann::json>& items);

// The agent's flags for the v2-systemd fixture host as node-a, discovering
// pods from `platform` over TLS with the bearer token in `token_file`,
// listening on 127.0.0.1:`port`; flows, profiler and the peer-pod watch off
// unless `extra` (appended) says otherwise.
std::vector<std::string> PlatformAgentArgs(const TestPlatform& platform,
                                           const std::string& token_file,
                                           int port,
                                           std::vector<std::string> extra = {});

// The agent's pods (/api/v1/pods): name -> uid; empty when it does not
// answer.
std::map<std::string, std::string> AgentPods(int port);

// The value of the first sample of `series` (a metric name, optionally
// with its labels as exposed, e.g. `x{mode="apiserver"}`) on the agent's
// /metrics; nullopt when absent.
std::optional<double> AgentMetric(int port, const std::string& series);
// How many `trainscope_pod_info` series name `pod`.
int PodInfoSeries(int port, const std::string& pod);

// The pod's uid on the API server; "" when it does not exist.
std::string UidOf(const TestPlatform& platform, const std::string& pod);

}  // namespace trainscope::testing
