#include "gpu/pid_pod.h"

#include <gtest/gtest.h>

#include "gpu_test_env.h"

namespace trainscope::gpu_test {
namespace {

TEST(ParsePidCgroupTest, FindsPodAndContainerInEveryLayout) {
  const std::string uid = kPodA;
  const std::string u_ = "5f1c2d3e_aaaa_4bbb_8ccc_111122223333";
  const std::string id = kCtrA;
  struct Case {
    const char* what;
    std::string content;
    std::optional<std::string> uid;
    std::string container;
  } cases[] = {
      {"v2 systemd burstable", V2SystemdCgroup(uid, id), uid, id},
      {"v2 systemd guaranteed (no qos level)",
       "0::/kubepods.slice/kubepods-pod" + u_ + ".slice/cri-containerd-" + id +
           ".scope\n",
       uid, id},
      {"v2 cri-o",
       "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" +
           u_ + ".slice/crio-" + id + ".scope\n",
       uid, id},
      {"v1 cgroupfs", V1CgroupfsCgroup(uid, id), uid, id},
      {"v1 systemd docker",
       "4:memory:/kubepods.slice/kubepods-burstable.slice/"
       "kubepods-burstable-pod" +
           u_ + ".slice/docker-" + id + ".scope\n",
       uid, id},
      {"seen from another cgroup namespace",
       "0::/../../kubepods-burstable.slice/kubepods-burstable-pod" + u_ +
           ".slice/cri-containerd-" + id + ".scope\n",
       uid, id},
      {"custom kubelet root",
       "0::/custom/k8s/kubepods/burstable/pod" + uid + "/" + id + "\n", uid,
       id},
      {"pod level only", "0::/kubepods/burstable/pod" + uid + "\n", uid, ""},
      {"v1 line with container wins over pod-only line",
       "13:rdma:/kubepods/burstable/pod" + uid +
           "\n12:memory:/kubepods/"
           "burstable/pod" +
           uid + "/" + id + "\n",
       uid, id},
      {"system service", "0::/system.slice/nvidia-persistenced.service\n",
       std::nullopt, ""},
      {"user session", "0::/user.slice/user-0.slice/session-3.scope\n",
       std::nullopt, ""},
      {"kubepods parent only", "0::/kubepods.slice/kubepods-burstable.slice\n",
       std::nullopt, ""},
      {"garbage", "not a cgroup file", std::nullopt, ""},
      {"empty", "", std::nullopt, ""},
  };
  for (const auto& c : cases) {
    auto got = ParsePidCgroup(c.content);
    if (!c.uid) {
      EXPECT_FALSE(got.has_value()) << c.what;
      continue;
    }
    ASSERT_TRUE(got.has_value()) << c.what;
    EXPECT_EQ(got->pod_uid, *c.uid) << c.what;
    EXPECT_EQ(got->container_id, c.container) << c.what;
  }
}

class LookupPidPodTest : public GpuEnv {};

TEST_F(LookupPidPodTest, TellsPodFromSystemFromGone) {
  AddProc(10, V2SystemdCgroup(kPodA, kCtrA));
  AddProc(11, "0::/system.slice/sshd.service\n");
  AddProc(12, "");  // exiting: kernel already emptied it

  auto pod = LookupPidPod(host_.proc, 10);
  EXPECT_EQ(pod.kind, PidLookup::kPod);
  EXPECT_EQ(pod.pod.pod_uid, kPodA);
  EXPECT_EQ(LookupPidPod(host_.proc, 11).kind, PidLookup::kNotInPod);
  EXPECT_EQ(LookupPidPod(host_.proc, 12).kind, PidLookup::kGone);
  EXPECT_EQ(LookupPidPod(host_.proc, 13).kind, PidLookup::kGone);
}

}  // namespace
}  // namespace trainscope::gpu_test
