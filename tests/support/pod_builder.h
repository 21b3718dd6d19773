#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainscope::testing {

// A container as it shows up in spec.containers and status.containerStatuses.
struct FakeContainer {
  std::string name = "main";
  std::string id;                      // runtime id; "" = not started yet
  std::string runtime = "containerd";  // scheme of containerID
  std::string cpu_limit;               // quantity text, "" = no limit
  std::string memory_limit;
  std::string image = "tensorflow/tensorflow:2.15.0";
  std::map<std::string, std::string> env;
};

// The parts of a Pod that discovery reads, with realistic defaults. Build()
// fills in what the API server would (creationTimestamp, ports, QoS, status
// conditions, owner references) so consumers meet the real shape.
struct FakePod {
  std::string name;
  std::string namespace_name = "default";
  std::string uid;  // "" = derived deterministically from namespace/name
  std::string node;
  std::string phase = "Running";
  std::string pod_ip;
  std::string host_ip = "10.0.0.10";
  bool host_network = false;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string tf_config;  // set as env TF_CONFIG of the first container
  std::vector<FakeContainer> containers = {FakeContainer{}};
  std::string owner_kind;  // "TFJob", "Job", "ReplicaSet"; "" = none
  std::string owner_name;

  nlohmann::json Build() const;
};

// A stable UUID-shaped id from text, so fixtures need not invent uids.
std::string FakeUid(const std::string& seed);

// {"kind":"PodList","apiVersion":"v1","metadata":{...},"items":[...]}
nlohmann::json BuildPodList(const std::vector<nlohmann::json>& pods,
                            const std::string& resource_version = "1");

}  // namespace trainscope::testing
