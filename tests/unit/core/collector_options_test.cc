#include "trainscope/collector_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trainscope {
namespace {

struct LinkOptions {
  std::vector<std::string> interfaces;
  double mbit = 100;
};
struct LibraryOptions {
  std::string path = "libx.so.1";
};

TEST(CollectorOptionsTest, DefaultsUntilSetThenByType) {
  CollectorOptions options;
  EXPECT_DOUBLE_EQ(options.Get<LinkOptions>().mbit, 100);
  options.Mutable<LinkOptions>().mbit = 25;
  options.Mutable<LinkOptions>().interfaces.push_back("eth1");
  EXPECT_DOUBLE_EQ(options.Get<LinkOptions>().mbit, 25);
  EXPECT_EQ(options.Get<LinkOptions>().interfaces.size(), 1u);
  // Another collector's options are its own.
  EXPECT_EQ(options.Get<LibraryOptions>().path, "libx.so.1");
}

// Flags hold a pointer into the options while the command line is read:
// it stays valid as other collectors' options are added.
TEST(CollectorOptionsTest, MutableReferenceOutlivesLaterInsertions) {
  CollectorOptions options;
  LinkOptions* link = &options.Mutable<LinkOptions>();
  options.Mutable<LibraryOptions>().path = "liby.so";
  link->mbit = 40;
  EXPECT_DOUBLE_EQ(options.Get<LinkOptions>().mbit, 40);
}

TEST(CollectorOptionsTest, CopiesAreDeep) {
  CollectorOptions a;
  a.Mutable<LibraryOptions>().path = "a.so";
  CollectorOptions b = a;
  b.Mutable<LibraryOptions>().path = "b.so";
  EXPECT_EQ(a.Get<LibraryOptions>().path, "a.so");
  EXPECT_EQ(b.Get<LibraryOptions>().path, "b.so");
  a = b;
  b.Mutable<LibraryOptions>().path = "c.so";
  EXPECT_EQ(a.Get<LibraryOptions>().path, "b.so");
  CollectorOptions moved = std::move(b);
  EXPECT_EQ(moved.Get<LibraryOptions>().path, "c.so");
}

}  // namespace
}  // namespace trainscope
