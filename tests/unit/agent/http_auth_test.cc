#include <gtest/gtest.h>

#include "http/auth.h"
#include "tls_files.h"
#include "trainscope/base64.h"

namespace trainscope {
namespace {

std::string Basic(const std::string& user_password) {
  return "Basic " + testing::Base64(user_password);
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

// crypt(3) stops at NUL: "secret\0junk" must not pass as "secret".
TEST(HttpAuthenticatorTest, APasswordWithANulIsDenied) {
  HttpAuthenticator auth({{"alice", testing::BcryptHash("secret")}}, {});
  using V = HttpAuthenticator::Verdict;
  EXPECT_EQ(auth.Check(Basic(std::string("alice:secret\0junk", 17))),
            V::kDenied);
  EXPECT_EQ(auth.Check(Basic(std::string("alice\0x:secret", 14))), V::kDenied);
  EXPECT_EQ(auth.Check(Basic("alice:secret")), V::kAllowed);
}

// A flood of wrong passwords from one address gets a few bcrypt checks,
// then 429 without one; a repeated wrong pair is answered from memory; a
// second address has its own ration; verified pairs never wait.
TEST(HttpAuthenticatorTest, WrongPasswordsAreRationedPerAddress) {
  HttpAuthenticator auth(
      {{"alice", testing::BcryptHash("secret")}}, {},
      HttpAuthBudget::Options{.burst = 3, .refill = std::chrono::hours(1)});
  using V = HttpAuthenticator::Verdict;
  EXPECT_EQ(auth.Check(Basic("alice:secret"), "10.0.0.9"), V::kAllowed);
  EXPECT_EQ(auth.Check(Basic("alice:wrong-0"), "10.0.0.1"), V::kDenied);
  EXPECT_EQ(auth.Check(Basic("alice:wrong-1"), "10.0.0.1"), V::kDenied);
  EXPECT_EQ(auth.Check(Basic("alice:wrong-2"), "10.0.0.1"), V::kDenied);
  EXPECT_EQ(auth.Check(Basic("alice:wrong-3"), "10.0.0.1"), V::kThrottled);
  EXPECT_EQ(auth.Check(Basic("alice:secret"), "10.0.0.1"), V::kAllowed)
      << "a verified pair is remembered, whatever the address's ration";
  EXPECT_EQ(auth.Check(Basic("alice:wrong-0"), "10.0.0.1"), V::kDenied)
      << "a wrong pair already checked is answered from memory";
  EXPECT_EQ(auth.Check(Basic("alice:wrong-4"), "10.0.0.2"), V::kDenied);
}

TEST(HttpAuthBudgetTest, RefillsOverTimeAndBoundsConcurrentChecks) {
  using Clock = HttpAuthBudget::Clock;
  HttpAuthBudget budget(HttpAuthBudget::Options{
      .burst = 2, .refill = std::chrono::seconds(1), .max_concurrent = 1});
  const Clock::time_point t0 = Clock::now();
  {
    auto first = budget.TryAcquire("a", t0);
    ASSERT_TRUE(first);
    EXPECT_FALSE(budget.TryAcquire("b", t0)) << "one check at a time";
  }
  EXPECT_TRUE(budget.TryAcquire("a", t0));
  EXPECT_FALSE(budget.TryAcquire("a", t0)) << "burst of 2 spent";
  EXPECT_FALSE(budget.TryAcquire("a", t0 + std::chrono::milliseconds(900)));
  EXPECT_TRUE(budget.TryAcquire("a", t0 + std::chrono::milliseconds(1950)));
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
