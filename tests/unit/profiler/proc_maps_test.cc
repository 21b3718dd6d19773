#include "profiler/proc_maps.h"

#include <gtest/gtest.h>

#include "profiler/kernel_symbols.h"

namespace trainscope::profiler {
namespace {

constexpr const char* kMaps =
    "55d0c0a00000-55d0c0a01000 r--p 00000000 fd:01 1234 /usr/bin/app\n"
    "55d0c0a01000-55d0c0a05000 r-xp 00001000 fd:01 1234 /usr/bin/app\n"
    "7f1000000000-7f1000021000 rw-p 00000000 00:00 0 \n"
    "7f1000100000-7f1000278000 r-xp 00028000 fd:01 99 "
    "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f1000300000-7f1000301000 r-xp 00000000 00:05 77 /memfd:jit (deleted)\n"
    "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n"
    "garbage line\n";

TEST(ProcMapsTest, ParsesEveryWellFormedLine) {
  auto maps = ParseProcMaps(kMaps);
  ASSERT_EQ(maps.size(), 6u);
  EXPECT_EQ(maps[1].start, 0x55d0c0a01000u);
  EXPECT_EQ(maps[1].end, 0x55d0c0a05000u);
  EXPECT_EQ(maps[1].offset, 0x1000u);
  EXPECT_TRUE(maps[1].executable);
  EXPECT_FALSE(maps[0].executable);
  EXPECT_EQ(maps[1].path, "/usr/bin/app");
  EXPECT_EQ(maps[2].path, "");
  EXPECT_EQ(maps[4].path, "/memfd:jit (deleted)");
  EXPECT_EQ(maps[5].path, "[vdso]");
}

TEST(ProcMapsTest, FindsOnlyExecutableMappings) {
  auto maps = ParseProcMaps(kMaps);
  const MapEntry* m = FindMapping(maps, 0x55d0c0a01234);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->path, "/usr/bin/app");
  EXPECT_EQ(FindMapping(maps, 0x55d0c0a00010), nullptr);  // r--p
  EXPECT_EQ(FindMapping(maps, 0x55d0c0a05000), nullptr);  // end is open
  EXPECT_EQ(FindMapping(maps, 0x1000), nullptr);
  EXPECT_EQ(FindMapping(maps, 0x7f1000100000)->path.substr(0, 4), "/usr");
}

TEST(ProcMapsTest, FileBackedExcludesAnonymousSpecialAndDeleted) {
  auto maps = ParseProcMaps(kMaps);
  EXPECT_TRUE(IsFileBacked(maps[1]));
  EXPECT_FALSE(IsFileBacked(maps[2]));  // anonymous
  EXPECT_FALSE(IsFileBacked(maps[4]));  // deleted memfd
  EXPECT_FALSE(IsFileBacked(maps[5]));  // [vdso]
  EXPECT_EQ(BaseName("/usr/lib/x86_64-linux-gnu/libc.so.6"), "libc.so.6");
  EXPECT_EQ(BaseName("app"), "app");
}

TEST(KernelSymbolsTest, ParsesTextSymbolsAndModules) {
  auto table = KernelSymbols::Parse(
      "ffffffff81000000 T _stext\n"
      "ffffffff81000100 t do_one\n"
      "ffffffff81000200 D some_data\n"
      "ffffffff81000300 T do_two\n"
      "ffffffffc0000000 t nft_do_chain\t[nf_tables]\n"
      "0000000000000000 T hidden\n");
  EXPECT_EQ(table.size(), 4u);
  EXPECT_EQ(table.Lookup(0xffffffff81000150)->name, "do_one");
  // Data symbols do not end a function.
  EXPECT_EQ(table.Lookup(0xffffffff81000250)->name, "do_one");
  EXPECT_EQ(table.Lookup(0xffffffff81000300)->name, "do_two");
  const auto mod = table.Lookup(0xffffffffc0000010);
  ASSERT_TRUE(mod);
  EXPECT_EQ(mod->name, "nft_do_chain");
  EXPECT_EQ(mod->module, "nf_tables");
  EXPECT_FALSE(table.Lookup(0x1000));
  EXPECT_EQ(table.Lookup(0xffffffff81000150)->module, "");
}

TEST(KernelSymbolsTest, HiddenAddressesGiveAnEmptyTable) {
  auto table = KernelSymbols::Parse(
      "0000000000000000 T _stext\n0000000000000000 t do_one\n");
  EXPECT_EQ(table.size(), 0u);
  EXPECT_FALSE(table.Lookup(0xffffffff81000150));
}

}  // namespace
}  // namespace trainscope::profiler
