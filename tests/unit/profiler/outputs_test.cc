#include "profiler/outputs.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <regex>

#include "profile.pb.h"

namespace trainscope::profiler {
namespace {

Frame F(const std::string& name, uint64_t address, bool kernel = false) {
  Frame f;
  f.function = name;
  f.module = kernel ? "[kernel]" : "app";
  f.address = address;
  f.kernel = kernel;
  f.resolved = true;
  return f;
}

Profile Sample() {
  Profile p;
  p.type = "cpu";
  p.period_ns = 10101010;
  p.hz = 99;
  p.duration_ns = 2000000000;
  ProfileSample a;  // leaf first
  a.frames = {F("hot;one", 0x1010), F("main", 0x1000)};
  a.value = 7;
  a.nanoseconds = 7 * p.period_ns;
  a.labels = {{"thread", "w0"}, {"container", "main"}, {"role", "ps"}};
  a.pid = 10;
  a.tid = 11;
  ProfileSample b = a;
  b.frames = {F("do_syscall_64", 0xffffffff81000000, true), F("main", 0x1000)};
  b.value = 3;
  b.nanoseconds = 3 * p.period_ns;
  ProfileSample c = a;  // same stack as a: folded sums them
  c.value = 2;
  c.nanoseconds = 2 * p.period_ns;
  p.samples = {a, b, c};
  p.comments = {"a comment"};
  return p;
}

std::string Gunzip(const std::string& in) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[4096];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  } while (rc == Z_OK);
  inflateEnd(&zs);
  EXPECT_EQ(rc, Z_STREAM_END);
  return out;
}

TEST(FoldedTest, RootFirstSummedSortedAndSanitized) {
  EXPECT_EQ(FoldedStacks(Sample()),
            "[thread w0];main;do_syscall_64 3\n"
            "[thread w0];main;hot:one 9\n");
}

TEST(FoldedTest, OffCpuStacksCarryTheirState) {
  Profile p = Sample();
  p.samples.resize(1);
  p.samples[0].labels["state"] = "blocked";
  EXPECT_EQ(FoldedStacks(p), "[thread w0];[blocked];main;hot:one 7\n");
}

TEST(FlameGraphTest, TotalsMatchTheFoldedInput) {
  const std::string folded = FoldedStacks(Sample());
  const std::string svg = FlameGraphSvg(folded, "CPU <test>", "samples");
  EXPECT_NE(svg.find("data-total=\"12\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>all (12 samples, 100.00%)</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>main (12 samples, 100.00%)</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>hot:one (9 samples, 75.00%)</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("CPU &lt;test&gt;"), std::string::npos);  // escaped
  EXPECT_EQ(svg.find("<test>"), std::string::npos);
}

TEST(FlameGraphTest, EmptyProfileSaysSo) {
  const std::string svg = FlameGraphSvg("", "t", "samples");
  EXPECT_NE(svg.find("no samples"), std::string::npos);
  EXPECT_NE(svg.find("data-total=\"0\""), std::string::npos);
}

TEST(PprofTest, DecodesAsTheProfileFormat) {
  const Profile p = Sample();
  perftools::profiles::Profile out;
  ASSERT_TRUE(out.ParseFromString(Gunzip(EncodePprofGzip(p))));
  ASSERT_GE(out.string_table_size(), 1);
  EXPECT_EQ(out.string_table(0), "");
  auto str = [&](int64_t i) { return out.string_table(static_cast<int>(i)); };
  ASSERT_EQ(out.sample_type_size(), 2);
  EXPECT_EQ(str(out.sample_type(0).type()), "samples");
  EXPECT_EQ(str(out.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(out.period(), p.period_ns);
  EXPECT_EQ(out.duration_nanos(), p.duration_ns);
  ASSERT_EQ(out.sample_size(), 3);
  int64_t total = 0;
  for (const auto& s : out.sample()) total += s.value(0);
  EXPECT_EQ(total, 12);
  // "main" is one function and one location, shared by every sample.
  EXPECT_EQ(out.function_size(), 3);
  EXPECT_EQ(out.location_size(), 3);
  const auto& first = out.sample(0);
  ASSERT_EQ(first.location_id_size(), 2);
  const auto& leaf = out.location(static_cast<int>(first.location_id(0)) - 1);
  EXPECT_EQ(leaf.id(), first.location_id(0));
  EXPECT_EQ(leaf.address(), 0x1010u);
  const auto& fn =
      out.function(static_cast<int>(leaf.line(0).function_id()) - 1);
  EXPECT_EQ(str(fn.name()), "hot;one");
  std::map<std::string, std::string> labels;
  std::map<std::string, int64_t> nums;
  for (const auto& l : first.label()) {
    if (l.str())
      labels[str(l.key())] = str(l.str());
    else
      nums[str(l.key())] = l.num();
  }
  EXPECT_EQ(labels["thread"], "w0");
  EXPECT_EQ(labels["container"], "main");
  EXPECT_EQ(labels["role"], "ps");
  EXPECT_EQ(nums["pid"], 10);
  EXPECT_EQ(nums["tid"], 11);
  ASSERT_EQ(out.comment_size(), 1);
  EXPECT_EQ(str(out.comment(0)), "a comment");
}

}  // namespace
}  // namespace trainscope::profiler
