#include "discovery/container_status.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "discovery/pod_json.h"

namespace trainscope {
namespace {

using nlohmann::json;

struct StateCase {
  const char* name;
  const char* status;  // one item of status.containerStatuses
  std::optional<int> restarts;
  std::string waiting;
  std::optional<double> running_since;
  std::optional<ContainerTermination> last;
};

TEST(ContainerStateTest, ReadsTheKubeletsView) {
  const StateCase cases[] = {
      {"running, never restarted",
       R"({"name": "c", "restartCount": 0,
           "state": {"running": {"startedAt": "2026-11-28T10:00:00Z"}}})",
       0, "", 1795860000.0, std::nullopt},
      {"OOM-killed and running again",
       R"({"name": "c", "restartCount": 2,
           "state": {"running": {"startedAt": "2026-11-28T10:00:12Z"}},
           "lastState": {"terminated": {"reason": "OOMKilled",
             "exitCode": 137, "startedAt": "2026-11-28T09:00:00Z",
             "finishedAt": "2026-11-28T10:00:00Z"}}})",
       2, "", 1795860012.0,
       ContainerTermination{"OOMKilled", 137, 0, 1795860000.0}},
      {"in back-off after an error with a signal",
       R"({"name": "c", "restartCount": 5,
           "state": {"waiting": {"reason": "CrashLoopBackOff",
                                 "message": "back-off 40s"}},
           "lastState": {"terminated": {"reason": "Error", "exitCode": 139,
             "signal": 11, "finishedAt": "2026-11-28T10:00:00.5Z"}}})",
       5, "CrashLoopBackOff", std::nullopt,
       ContainerTermination{"Error", 139, 11, 1795860000.5}},
      {"no restartCount (a hand-written pod file): unknown, not 0",
       R"({"name": "c", "containerID": "containerd://x"})", std::nullopt, "",
       std::nullopt, std::nullopt},
      {"a finishedAt that is no timestamp stays unknown",
       R"({"name": "c", "restartCount": 1,
           "lastState": {"terminated": {"exitCode": 1,
                                        "finishedAt": "yesterday"}}})",
       1, "", std::nullopt, ContainerTermination{"", 1, 0, std::nullopt}},
      {"null members are absent",
       R"({"name": "c", "restartCount": null, "state": null,
           "lastState": {"terminated": null}})",
       std::nullopt, "", std::nullopt, std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ContainerInfo info;
    std::string error;
    ASSERT_TRUE(ParseContainerState(
        json::parse(c.status), "status.containerStatuses[0]", &info, &error))
        << error;
    EXPECT_EQ(info.restart_count, c.restarts);
    EXPECT_EQ(info.waiting_reason, c.waiting);
    EXPECT_EQ(info.running_since_s, c.running_since);
    EXPECT_EQ(info.last_terminated, c.last);
  }
}

TEST(ContainerStateTest, AWrongTypeNamesTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"restartCount": "2"})",
       "status.containerStatuses[0].restartCount: expected integer"},
      {R"({"restartCount": 1.5})",
       "status.containerStatuses[0].restartCount: expected integer"},
      {R"({"restartCount": 99999999999})", "out of range"},
      {R"({"state": []})",
       "status.containerStatuses[0].state: expected object"},
      {R"({"state": {"waiting": {"reason": 3}}})",
       "status.containerStatuses[0].state.waiting.reason: expected string"},
      {R"({"lastState": {"terminated": {"exitCode": "137"}}})",
       "status.containerStatuses[0].lastState.terminated.exitCode: expected "
       "integer"},
  };
  for (const auto& [status, want] : cases) {
    SCOPED_TRACE(status);
    ContainerInfo info;
    std::string error;
    EXPECT_FALSE(ParseContainerState(
        json::parse(status), "status.containerStatuses[0]", &info, &error));
    EXPECT_NE(error.find(want), std::string::npos) << error;
  }
}

TEST(ContainerStateTest, APodCarriesItsContainersState) {
  const json pod = json::parse(R"({
    "metadata": {"name": "w-0", "uid": "u"},
    "status": {"phase": "Running", "containerStatuses": [
      {"name": "trainer", "containerID": "containerd://abc",
       "restartCount": 3,
       "lastState": {"terminated": {"reason": "Error", "exitCode": 1,
                                    "finishedAt": "2026-11-28T10:00:00Z"}}}]}
  })");
  PodInfo info;
  ASSERT_TRUE(ParsePod(pod, &info).ok());
  ASSERT_EQ(info.containers.size(), 1u);
  EXPECT_EQ(info.containers[0].id, "abc");
  EXPECT_EQ(info.containers[0].restart_count, 3);
  ASSERT_TRUE(info.containers[0].last_terminated);
  EXPECT_EQ(info.containers[0].last_terminated->exit_code, 1);
}

}  // namespace
}  // namespace trainscope
