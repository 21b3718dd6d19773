#include "discovery/pod_source_factory.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace trainscope {
namespace {

namespace fs = std::filesystem;

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ResolveApiServerOptionsTest, ExplicitUrl) {
  DiscoveryConfig c;
  c.kube_api = "http://127.0.0.1:8001";
  c.kube_token_file = "/tmp/t";
  c.node_name = "n1";
  c.backoff_initial = std::chrono::milliseconds(7);
  ApiServerSourceOptions o;
  ASSERT_TRUE(ResolveApiServerOptions(c, FakeEnv({}), &o).ok());
  EXPECT_EQ(o.api_url, "http://127.0.0.1:8001");
  EXPECT_EQ(o.token_file, "/tmp/t");
  EXPECT_EQ(o.ca_file, "");
  EXPECT_EQ(o.node_name, "n1");
  EXPECT_EQ(o.backoff_initial.count(), 7);
}

TEST(ResolveApiServerOptionsTest, InCluster) {
  std::string tmpl = (fs::temp_directory_path() / "sa-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const fs::path sa = tmpl;
  std::ofstream(sa / "ca.crt") << "cert";
  DiscoveryConfig c;
  c.service_account_dir = sa.string();
  ApiServerSourceOptions o;
  ASSERT_TRUE(
      ResolveApiServerOptions(c,
                              FakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                       {"KUBERNETES_SERVICE_PORT", "6443"}}),
                              &o)
          .ok());
  EXPECT_EQ(o.api_url, "https://10.96.0.1:6443");
  EXPECT_EQ(o.token_file, (sa / "token").string());
  EXPECT_EQ(o.ca_file, (sa / "ca.crt").string());

  ASSERT_TRUE(ResolveApiServerOptions(
                  c, FakeEnv({{"KUBERNETES_SERVICE_HOST", "fd00::1"}}), &o)
                  .ok());
  EXPECT_EQ(o.api_url, "https://[fd00::1]:443");

  // The token is required in a cluster: Start() reports its absence.
  PodTable table;
  Status error = Status::Ok();
  auto source =
      MakePodSource(c, HostPaths{}, table, &error,
                    FakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}));
  ASSERT_NE(source, nullptr) << error.message();
  EXPECT_EQ(source->name(), "apiserver");
  Status st = source->Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find((sa / "token").string()), std::string::npos)
      << st.message();
  fs::remove_all(sa);
}

TEST(ResolveApiServerOptionsTest, NotInClusterWithoutUrl) {
  ApiServerSourceOptions o;
  Status st = ResolveApiServerOptions(DiscoveryConfig{}, FakeEnv({}), &o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("KUBERNETES_SERVICE_HOST"), std::string::npos);
  EXPECT_NE(st.message().find("--kube-api"), std::string::npos);
}

TEST(MakePodSourceTest, Modes) {
  struct Case {
    DiscoveryMode mode;
    std::string pod_file;
    std::string want_name;  // "" = error
    std::string want_error;
  } cases[] = {
      {DiscoveryMode::kFile, "/tmp/pods.json", "file", ""},
      {DiscoveryMode::kFile, "", "", "--pod-file"},
      {DiscoveryMode::kCgroup, "", "cgroup", ""},
      {DiscoveryMode::kApiServer, "", "", "KUBERNETES_SERVICE_HOST"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(NameOfEnum(kDiscoveryModeNames, c.mode));
    DiscoveryConfig config;
    config.mode = c.mode;
    config.pod_file = c.pod_file;
    PodTable table;
    Status error = Status::Ok();
    auto source =
        MakePodSource(config, HostPaths{}, table, &error, FakeEnv({}));
    if (c.want_name.empty()) {
      EXPECT_EQ(source, nullptr);
      EXPECT_NE(error.message().find(c.want_error), std::string::npos)
          << error.message();
    } else {
      ASSERT_NE(source, nullptr) << error.message();
      EXPECT_TRUE(error.ok());
      EXPECT_EQ(source->name(), c.want_name);
    }
  }
}

// The flag's names and the sources' names are one table.
TEST(DiscoveryModeTest, NamesRoundTrip) {
  for (const auto& [mode, name] : kDiscoveryModeNames) {
    EXPECT_EQ(EnumFromName(kDiscoveryModeNames, name), mode);
    EXPECT_EQ(NameOfEnum(kDiscoveryModeNames, mode), name);
  }
  EXPECT_FALSE(EnumFromName(kDiscoveryModeNames, "k8s").has_value());
  EXPECT_EQ(EnumNames(kDiscoveryModeNames),
            (std::vector<std::string>{"apiserver", "file", "cgroup"}));
}

}  // namespace
}  // namespace trainscope
