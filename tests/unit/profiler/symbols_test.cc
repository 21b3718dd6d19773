// ELF symbols through libelf on this very test binary (built with symbols)
// and the symbolizer on the live process's own maps.
#include <gtest/gtest.h>
#include <unistd.h>

#include "profiler/elf_symbols.h"
#include "profiler/symbolizer.h"

extern "C" __attribute__((noinline)) int profiler_unit_test_marker(int x) {
  return x * 3 + 1;
}

namespace trainscope::profiler {
namespace {

__attribute__((noinline)) int MangledMarker(int x) { return x + 7; }

TEST(ElfSymbolsTest, ReadsFunctionSymbolsAndBuildId) {
  Status error = Status::Ok();
  auto symbols = ElfSymbols::Load("/proc/self/exe", &error);
  ASSERT_NE(symbols, nullptr) << error.message();
  EXPECT_GT(symbols->size(), 100u);
  EXPECT_EQ(symbols->build_id().size(), 40u);  // GNU ld's sha1 build id
}

TEST(ElfSymbolsTest, MissingFileIsAnErrorWithThePath) {
  Status error = Status::Ok();
  EXPECT_EQ(ElfSymbols::Load("/nonexistent/lib.so", &error), nullptr);
  EXPECT_NE(error.message().find("/nonexistent/lib.so"), std::string::npos);
}

TEST(ElfSymbolsTest, ReadsThisProcesssVdsoFromMemory) {
  auto vdso = ElfSymbols::Vdso();
  ASSERT_NE(vdso, nullptr);
  EXPECT_GE(vdso->size(), 4u);  // clock_gettime, gettimeofday, time, ...
  uint64_t address = 0;
  EXPECT_TRUE(vdso->OffsetToAddress(0x100, &address));
}

TEST(DemangleTest, CppNamesOnly) {
  EXPECT_EQ(Demangle("_ZN10trainscope3fooEi"), "trainscope::foo(int)");
  EXPECT_EQ(Demangle("main"), "main");
  EXPECT_EQ(Demangle("_Znot_valid"), "_Znot_valid");
}

TEST(SymbolizerTest, ResolvesThisProcessesFunctions) {
  Symbolizer symbolizer({});
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  ASSERT_TRUE(symbolizer.CaptureMaps(pid));
  const auto a = reinterpret_cast<uint64_t>(&profiler_unit_test_marker);
  const auto b = reinterpret_cast<uint64_t>(&MangledMarker);
  // The leaf is used as is; callers as return addresses (address - 1), so
  // the caller frame points one byte into the function.
  auto frames = symbolizer.SymbolizeUser(pid, {a + 2, b + 2, 0x10});
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].function, "profiler_unit_test_marker");
  EXPECT_TRUE(frames[0].resolved);
  EXPECT_EQ(frames[0].module, "profiler_unit_test");
  EXPECT_EQ(frames[1].function,
            "trainscope::profiler::(anonymous namespace)::MangledMarker(int)");
  EXPECT_FALSE(frames[2].resolved);
  EXPECT_EQ(frames[2].function, "[unknown] 0x10");
  // Cached: capturing the process again reads no file.
  const auto before = symbolizer.stats();
  EXPECT_GT(before.files_loaded, 0u);
  ASSERT_TRUE(symbolizer.CaptureMaps(pid));
  EXPECT_EQ(symbolizer.SymbolizeUser(pid, {a})[0].function,
            "profiler_unit_test_marker");
  EXPECT_EQ(symbolizer.stats().files_loaded, before.files_loaded);
  EXPECT_GT(symbolizer.stats().cache_hits, before.cache_hits);
}

TEST(SymbolizerTest, ForgettingTheLastProcessOfAFileDropsItsSymbols) {
  Symbolizer symbolizer({});
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  ASSERT_TRUE(symbolizer.CaptureMaps(pid));
  const auto captured = symbolizer.stats();
  EXPECT_GT(captured.files_cached, 0u);
  EXPECT_GT(captured.bytes_cached, 0u);
  symbolizer.ForgetMaps(pid);
  EXPECT_EQ(symbolizer.stats().files_cached, 0u);
  EXPECT_EQ(symbolizer.stats().bytes_cached, 0u);
  // Captured again later: the files are read again and resolve.
  ASSERT_TRUE(symbolizer.CaptureMaps(pid));
  EXPECT_GT(symbolizer.stats().files_loaded, captured.files_loaded);
  const auto a = reinterpret_cast<uint64_t>(&profiler_unit_test_marker);
  EXPECT_EQ(symbolizer.SymbolizeUser(pid, {a})[0].function,
            "profiler_unit_test_marker");
}

TEST(SymbolizerTest, UnknownProcessKeepsAddresses) {
  Symbolizer symbolizer({});
  auto frames = symbolizer.SymbolizeUser(999999999, {0x401000});
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].module, "[unknown]");
  EXPECT_EQ(frames[0].function, "[unknown] 0x401000");
}

}  // namespace
}  // namespace trainscope::profiler
