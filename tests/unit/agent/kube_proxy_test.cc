// The pure parts of `--kubeconfig` (cli/kube_proxy.h): names the API
// accepts, errors explained, TLS material checked before any request. The
// pod proxy itself runs against a real API server:
// tests/platform/kube_proxy_test.cc.
#include "cli/kube_proxy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/http_fetch.h"

namespace trainscope::cli {
namespace {

using ::testing::HasSubstr;

TEST(KubeNameTest, AcceptsWhatKubernetesNamesAre) {
  for (const char* ok : {"node-a", "ip-10-0-3-17.ec2.internal", "a", "x1"})
    EXPECT_TRUE(IsKubeName(ok)) << ok;
  for (const char* bad :
       {"", "Node-A", "a/b", "-a", ".a", "a b", "a?x=1", "..", "a%2Fb"})
    EXPECT_FALSE(IsKubeName(bad)) << bad;
  EXPECT_FALSE(IsKubeName(std::string(254, 'a')));
}

TEST(ExplainProxyErrorTest, SaysWhyA401OrA403CameBack) {
  EXPECT_THAT(ExplainProxyError("https://api/... answered HTTP 401: "),
              HasSubstr("does not pass yours on"));
  const std::string expired =
      "answered HTTP 401: {\"kind\":\"Status\",\"apiVersion\":\"v1\","
      "\"status\":\"Failure\",\"message\":\"Unauthorized\"}";
  EXPECT_EQ(ExplainProxyError(expired), expired) << "the API server's own";
  const std::string forbidden =
      "answered HTTP 403: pods \"trainscope-agent-x\" is forbidden: User "
      "\"bob\" cannot get resource \"pods/proxy\"";
  EXPECT_THAT(ExplainProxyError(forbidden), HasSubstr("trainscope-cli"));
  // Other answers are left as they are.
  EXPECT_EQ(ExplainProxyError("answered HTTP 404: no"),
            "answered HTTP 404: no");
  EXPECT_EQ(ExplainProxyError("answered HTTP 403: pods is forbidden"),
            "answered HTTP 403: pods is forbidden");
}

TEST(CheckTlsMaterialTest, RefusesPemThatDoesNotParse) {
  HttpTarget target;
  EXPECT_TRUE(CheckTlsMaterial(target).ok()) << "nothing to check";
  target.ca_pem = "not a certificate";
  EXPECT_THAT(CheckTlsMaterial(target).message(),
              HasSubstr("the CA data holds no PEM certificate"));
  target.ca_pem.clear();
  target.client_cert_pem = "-----BEGIN CERTIFICATE-----\nxx\n";
  target.client_key_pem = "key";
  EXPECT_THAT(CheckTlsMaterial(target).message(),
              HasSubstr("the client certificate is not PEM"));
}

}  // namespace
}  // namespace trainscope::cli
