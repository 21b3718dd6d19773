// The fake must answer like NVML does, or the collector tests prove nothing:
// these pin the documented return-code protocol the collector relies on.

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/nvml_api.h"
#include "gpu_test_env.h"

namespace trainscope::gpu_test {
namespace {

class FakeNvmlTest : public GpuEnv {
 protected:
  void SetUp() override {
    GpuEnv::SetUp();
    handle_ = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
  }
  void TearDown() override {
    if (handle_) dlclose(handle_);
    GpuEnv::TearDown();
  }
  template <typename Fn>
  Fn Sym(const char* name) {
    auto fn = reinterpret_cast<Fn>(dlsym(handle_, name));
    EXPECT_NE(fn, nullptr) << name;
    return fn;
  }

  void* handle_ = nullptr;
};

TEST_F(FakeNvmlTest, FollowsNvmlReturnCodeProtocol) {
  nlohmann::json dev = Device(0, {{{"pid", 1}}, {{"pid", 2}}, {{"pid", 3}}});
  dev["power_mw"] = nullptr;
  nlohmann::json idle = Device(1);
  nlohmann::json lost = Device(2);
  lost["lost"] = true;
  WriteConfig({{"devices", {dev, idle, lost}}});

  auto init = Sym<nvmlInit_v2_fn>("nvmlInit_v2");
  auto shutdown = Sym<nvmlShutdown_fn>("nvmlShutdown");
  auto err = Sym<nvmlErrorString_fn>("nvmlErrorString");
  auto count = Sym<nvmlDeviceGetCount_v2_fn>("nvmlDeviceGetCount_v2");
  auto handle =
      Sym<nvmlDeviceGetHandleByIndex_v2_fn>("nvmlDeviceGetHandleByIndex_v2");
  auto power = Sym<nvmlDeviceGetPowerUsage_fn>("nvmlDeviceGetPowerUsage");
  auto temp = Sym<nvmlDeviceGetTemperature_fn>("nvmlDeviceGetTemperature");
  auto procs = Sym<nvmlDeviceGetComputeRunningProcesses_fn>(
      "nvmlDeviceGetComputeRunningProcesses_v3");
  // Only the _v3 entry point exists, as the collector's first choice.
  EXPECT_EQ(dlsym(handle_, "nvmlDeviceGetComputeRunningProcesses"), nullptr);

  unsigned n = 0;
  EXPECT_EQ(count(&n), NVML_ERROR_UNINITIALIZED);
  ASSERT_EQ(init(), NVML_SUCCESS);
  ASSERT_EQ(count(&n), NVML_SUCCESS);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(count(nullptr), NVML_ERROR_INVALID_ARGUMENT);

  nvmlDevice_t d0 = nullptr, d1 = nullptr, d2 = nullptr, bad = nullptr;
  EXPECT_EQ(handle(3, &bad), NVML_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(handle(0, &d0), NVML_SUCCESS);
  ASSERT_EQ(handle(1, &d1), NVML_SUCCESS);
  ASSERT_EQ(handle(2, &d2), NVML_SUCCESS);

  unsigned v = 0;
  EXPECT_EQ(power(d0, &v), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(power(d1, &v), NVML_SUCCESS);
  EXPECT_EQ(power(d1, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(temp(d2, NVML_TEMPERATURE_GPU, &v), NVML_ERROR_GPU_IS_LOST);

  // Size query: count 0 and no buffer answers the needed count.
  unsigned want = 0;
  EXPECT_EQ(procs(d0, &want, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(want, 3u);
  std::vector<nvmlProcessInfo_t> buf(2);
  unsigned have = 2;
  EXPECT_EQ(procs(d0, &have, buf.data()), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(have, 3u);
  buf.resize(3);
  EXPECT_EQ(procs(d0, &have, buf.data()), NVML_SUCCESS);
  EXPECT_EQ(buf[2].pid, 3u);
  unsigned none = 0;
  EXPECT_EQ(procs(d1, &none, nullptr), NVML_SUCCESS);  // no processes
  EXPECT_EQ(none, 0u);

  EXPECT_STREQ(err(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
  EXPECT_STREQ(err(NVML_ERROR_NOT_SUPPORTED), "Not Supported");
  ASSERT_EQ(shutdown(), NVML_SUCCESS);
  EXPECT_EQ(shutdown(), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(power(d1, &v), NVML_ERROR_UNINITIALIZED);
}

TEST_F(FakeNvmlTest, MissingSymbolsVariantLacksDeviceGetCount) {
  void* h = dlopen(FAKE_NVML_MISSING_SYMBOLS_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  EXPECT_EQ(dlsym(h, "nvmlDeviceGetCount_v2"), nullptr);
  EXPECT_NE(dlsym(h, "nvmlInit_v2"), nullptr);
  dlclose(h);
}

}  // namespace
}  // namespace trainscope::gpu_test
