#include "cluster_api.h"

#include <stdexcept>

#include "fake_apiserver.h"

namespace trainsim {
namespace {

using trainscope::testing::FakeApiServer;

// One run's fake API server: pods only, uids as trainsim made them.
class FakeClusterApi final : public ClusterApi {
 public:
  FakeClusterApi() {
    trainscope::testing::FakeApiServerOptions options;
    // An idle watch re-checks at this pace; slower means less CPU.
    options.watch_poll = std::chrono::milliseconds(250);
    server_ = std::make_unique<FakeApiServer>(options);
    std::string error;
    if (!server_->Start(&error))
      throw std::runtime_error("API server: " + error);
  }
  ~FakeClusterApi() override { DeleteAll(); }
  FakeClusterApi(const FakeClusterApi&) = delete;
  FakeClusterApi& operator=(const FakeClusterApi&) = delete;

  void CreateNodes(const Layout& /*layout*/) override {}
  std::string CreatePod(const nlohmann::json& pod) override {
    server_->AddPod(pod);
    return pod["metadata"]["uid"].get<std::string>();
  }
  void UpdatePod(const nlohmann::json& pod) override {
    server_->ModifyPod(pod);
  }
  void DeleteAll() noexcept override { server_->Stop(); }
  AgentApiAccess agent_access() const override {
    return {server_->url(), "", ""};
  }
  bool assigns_uids() const override { return false; }

 private:
  std::unique_ptr<FakeApiServer> server_;
};

}  // namespace

std::unique_ptr<ClusterApi> StartFakeClusterApi() {
  return std::make_unique<FakeClusterApi>();
}

}  // namespace trainsim
