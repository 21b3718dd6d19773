#include "http_auth.h"

#include <gtest/gtest.h>

#include "tls_files.h"

namespace trainscope {
namespace {

std::string Basic(const std::string& user_password) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < user_password.size(); i += 3) {
    uint32_t n = static_cast<unsigned char>(user_password[i]) << 16;
    if (i + 1 < user_password.size())
      n |= static_cast<unsigned char>(user_password[i + 1]) << 8;
    if (i + 2 < user_password.size())
      n |= static_cast<unsigned char>(user_password[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < user_password.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < user_password.size() ? kAlphabet[n & 63] : '=';
  }
  return "Basic " + out;
}

TEST(DecodeBase64Test, DecodesPaddedInputAndRefusesGarbage) {
  std::string out;
  ASSERT_TRUE(DecodeBase64("YWxpY2U6c2VjcmV0", &out));
  EXPECT_EQ(out, "alice:secret");
  ASSERT_TRUE(DecodeBase64("YTpi", &out));
  EXPECT_EQ(out, "a:b");
  ASSERT_TRUE(DecodeBase64("YQ==", &out));
  EXPECT_EQ(out, "a");
  ASSERT_TRUE(DecodeBase64("YWI=", &out));
  EXPECT_EQ(out, "ab");
  EXPECT_FALSE(DecodeBase64("YWI", &out));
  EXPECT_FALSE(DecodeBase64("Y=I=", &out));
  EXPECT_FALSE(DecodeBase64("YW*=", &out));
  EXPECT_FALSE(DecodeBase64("YQ==YQ==", &out));
}

TEST(CryptMatchesTest, VerifiesBcryptOfEveryPrefix) {
  const std::string hash = testing::BcryptHash("pa:ss word");
  ASSERT_EQ(hash.substr(0, 4), "$2b$");
  EXPECT_TRUE(CryptMatches("pa:ss word", hash));
  EXPECT_FALSE(CryptMatches("pa:ss wore", hash));
  // htpasswd -B writes $2y$, older tools $2a$: same algorithm.
  for (const char* prefix : {"$2y$", "$2a$"}) {
    std::string other = hash;
    other.replace(0, 4, prefix);
    EXPECT_TRUE(CryptMatches("pa:ss word", other)) << prefix;
  }
  EXPECT_FALSE(CryptMatches("x", "not a hash"));
}

TEST(HttpAuthenticatorTest, DisabledAllowsEverything) {
  HttpAuthenticator auth({}, {});
  EXPECT_FALSE(auth.enabled());
  EXPECT_EQ(auth.Check(""), HttpAuthenticator::Verdict::kAllowed);
}

TEST(HttpAuthenticatorTest, BasicUsers) {
  HttpAuthenticator auth({{"alice", testing::BcryptHash("secret")}}, {});
  using V = HttpAuthenticator::Verdict;
  EXPECT_EQ(auth.Check(""), V::kMissing);
  EXPECT_EQ(auth.Check(Basic("alice:secret")), V::kAllowed);
  EXPECT_EQ(auth.Check(Basic("alice:secret")), V::kAllowed);  // remembered
  EXPECT_EQ(auth.Check("basic " + Basic("alice:secret").substr(6)),
            V::kAllowed);
  EXPECT_EQ(auth.Check(Basic("alice:Secret")), V::kDenied);
  EXPECT_EQ(auth.Check(Basic("alice:")), V::kDenied);
  EXPECT_EQ(auth.Check(Basic("bob:secret")), V::kDenied);
  EXPECT_EQ(auth.Check(Basic("alicesecret")), V::kDenied);
  EXPECT_EQ(auth.Check("Basic !!!!"), V::kDenied);
  EXPECT_EQ(auth.Check("Bearer secret"), V::kDenied);
  EXPECT_EQ(auth.Challenge().rfind("Basic ", 0), 0u);
}

TEST(HttpAuthenticatorTest, BearerTokens) {
  HttpAuthenticator auth({}, {"tok-1", "tok-2"});
  using V = HttpAuthenticator::Verdict;
  EXPECT_EQ(auth.Check("Bearer tok-1"), V::kAllowed);
  EXPECT_EQ(auth.Check("Bearer tok-2"), V::kAllowed);
  EXPECT_EQ(auth.Check("Bearer tok-"), V::kDenied);
  EXPECT_EQ(auth.Check("Bearer tok-12"), V::kDenied);
  EXPECT_EQ(auth.Check("Bearer "), V::kDenied);
  EXPECT_EQ(auth.Check(Basic("tok-1:tok-1")), V::kDenied);
  EXPECT_EQ(auth.Challenge().rfind("Bearer ", 0), 0u);
}

}  // namespace
}  // namespace trainscope
