#include "gpu/device_reader.h"

#include <algorithm>
#include <map>

namespace trainscope {
namespace {

// NVML's process lists can grow between the sizing call and the read (a
// process starts); a few rounds settle it, more means something is wrong.
constexpr int kMaxSizeRetries = 4;

class Reader {
 public:
  Reader(const NvmlLibrary& nvml, DeviceRead& out) : nvml_(nvml), out_(out) {}

  // True when `r` is success. NOT_SUPPORTED is the device's answer, not a
  // failure; GPU_IS_LOST poisons the whole device.
  bool Ok(const char* call, nvmlReturn_t r) {
    if (r == NVML_SUCCESS) return true;
    if (r == NVML_ERROR_GPU_IS_LOST) {
      if (!out_.lost) out_.error = nvml_.Describe(call, r);
      out_.lost = true;
    } else if (r != NVML_ERROR_NOT_SUPPORTED) {
      out_.warnings.push_back(nvml_.Describe(call, r));
    }
    return false;
  }
  bool lost() const { return out_.lost; }

 private:
  const NvmlLibrary& nvml_;
  DeviceRead& out_;
};

// Calls `fill(buffer, &count)` under NVML's size protocol: on
// INSUFFICIENT_SIZE the needed count was written back, grow and retry.
template <typename T, typename Fill>
nvmlReturn_t CallSized(std::vector<T>& buffer, unsigned& capacity, Fill fill) {
  nvmlReturn_t r = NVML_ERROR_INSUFFICIENT_SIZE;
  for (int attempt = 0; attempt <= kMaxSizeRetries; ++attempt) {
    buffer.resize(std::max(capacity, 1u));
    auto count = static_cast<unsigned>(buffer.size());
    r = fill(buffer.data(), &count);
    if (r == NVML_SUCCESS) {
      buffer.resize(std::min<size_t>(count, buffer.size()));
      return r;
    }
    if (r != NVML_ERROR_INSUFFICIENT_SIZE) return r;
    // Headroom for processes that start before the next call.
    capacity = std::max(count + count / 4 + 4, capacity * 2);
  }
  return r;
}

void ReadFieldValues(const NvmlFunctions& fn, nvmlDevice_t dev, Reader& rd,
                     GpuDeviceSample& s) {
  if (!fn.DeviceGetFieldValues) return;
  nvmlFieldValue_t fields[5] = {};
  const unsigned ids[5] = {NVML_FI_DEV_ECC_SBE_VOL_TOTAL,
                           NVML_FI_DEV_ECC_DBE_VOL_TOTAL,
                           NVML_FI_DEV_PCIE_REPLAY_COUNTER,
                           NVML_FI_DEV_RETIRED_SBE, NVML_FI_DEV_RETIRED_DBE};
  std::optional<uint64_t>* targets[5] = {
      &s.ecc_corrected_errors, &s.ecc_uncorrected_errors, &s.pcie_replays,
      &s.retired_pages_single_bit, &s.retired_pages_double_bit};
  for (int i = 0; i < 5; ++i) fields[i].fieldId = ids[i];
  if (!rd.Ok("nvmlDeviceGetFieldValues",
             fn.DeviceGetFieldValues(dev, 5, fields))) {
    return;
  }
  for (int i = 0; i < 5; ++i) {
    const auto& f = fields[i];
    // Per-field codes: a device without ECC answers NOT_SUPPORTED here.
    if (f.nvmlReturn != NVML_SUCCESS) continue;
    switch (f.valueType) {
      case NVML_VALUE_TYPE_UNSIGNED_INT:
        *targets[i] = f.value.uiVal;
        break;
      case NVML_VALUE_TYPE_UNSIGNED_LONG:
        *targets[i] = f.value.ulVal;
        break;
      case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
        *targets[i] = f.value.ullVal;
        break;
      case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
        if (f.value.sllVal >= 0) *targets[i] = f.value.sllVal;
        break;
      case NVML_VALUE_TYPE_DOUBLE:
        if (f.value.dVal >= 0)
          *targets[i] = static_cast<uint64_t>(f.value.dVal);
        break;
    }
  }
}

void ReadProcesses(const NvmlFunctions& fn, nvmlDevice_t dev, Reader& rd,
                   DeviceMemo& memo, DeviceRead& out) {
  if (!fn.DeviceGetComputeRunningProcesses) return;
  std::vector<nvmlProcessInfo_t> infos;
  nvmlReturn_t r = CallSized(
      infos, memo.process_capacity, [&](nvmlProcessInfo_t* p, unsigned* n) {
        return fn.DeviceGetComputeRunningProcesses(dev, n, p);
      });
  if (!rd.Ok("nvmlDeviceGetComputeRunningProcesses", r)) return;
  out.sample->process_count = static_cast<unsigned>(infos.size());

  // Per-process utilization: average the samples newer than the last cycle.
  std::map<unsigned, std::pair<double, int>> util;  // pid -> (sum %, n)
  bool util_known = false;
  if (fn.DeviceGetProcessUtilization) {
    std::vector<nvmlProcessUtilizationSample_t> samples;
    unsigned long long last = memo.last_seen_timestamp;
    r = CallSized(samples, memo.sample_capacity,
                  [&](nvmlProcessUtilizationSample_t* p, unsigned* n) {
                    return fn.DeviceGetProcessUtilization(dev, p, n, last);
                  });
    if (r == NVML_SUCCESS) {
      util_known = true;
      for (const auto& s : samples) {
        auto& [sum, n] = util[s.pid];
        sum += s.smUtil;
        ++n;
        memo.last_seen_timestamp =
            std::max(memo.last_seen_timestamp, s.timeStamp);
      }
    } else if (r == NVML_ERROR_NOT_FOUND) {
      util_known = true;  // no kernel ran since the last cycle: all idle
    } else {
      rd.Ok("nvmlDeviceGetProcessUtilization", r);
    }
  }
  if (rd.lost()) return;

  for (const auto& info : infos) {
    GpuProcess p;
    p.pid = info.pid;
    if (info.usedGpuMemory != NVML_VALUE_NOT_AVAILABLE) {
      p.memory_bytes = info.usedGpuMemory;
    }
    if (util_known) {
      auto it = util.find(info.pid);
      p.sm_ratio =
          it == util.end() ? 0.0 : it->second.first / it->second.second / 100.0;
    }
    out.processes.push_back(p);
  }
}

}  // namespace

DeviceRead ReadDevice(const NvmlLibrary& nvml, unsigned index,
                      DeviceMemo& memo) {
  DeviceRead out;
  Reader rd(nvml, out);
  const NvmlFunctions& fn = nvml.fn();

  nvmlDevice_t dev = nullptr;
  nvmlReturn_t r = fn.DeviceGetHandleByIndex(index, &dev);
  if (r != NVML_SUCCESS) {
    out.lost = r == NVML_ERROR_GPU_IS_LOST;
    out.error = nvml.Describe("nvmlDeviceGetHandleByIndex_v2", r);
    return out;
  }
  out.handle = dev;

  GpuDeviceSample s;
  s.index = index;
  char text[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  if (!rd.Ok("nvmlDeviceGetUUID", fn.DeviceGetUUID(dev, text, sizeof text))) {
    // The UUID is the device's identity for joins; without it, skip.
    if (out.error.empty()) {
      out.error = "GPU " + std::to_string(index) + " has no readable UUID";
    }
    return out;
  }
  s.uuid = text;
  memo.uuid = s.uuid;
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  if (rd.Ok("nvmlDeviceGetName", fn.DeviceGetName(dev, name, sizeof name))) {
    s.model_name = name;
  }

  nvmlUtilization_t u{};
  if (rd.Ok("nvmlDeviceGetUtilizationRates",
            fn.DeviceGetUtilizationRates(dev, &u))) {
    s.gpu_utilization_ratio = u.gpu / 100.0;
    s.memory_utilization_ratio = u.memory / 100.0;
  }
  // Memory used as nvidia-smi shows it: _v2's `used`, without what the
  // driver reserves. The old call counts the reserved part in (480 MiB on an
  // H100; docs/gpu.md, checked on one). Drivers without _v2 (or refusing
  // its struct version) get the old call.
  nvmlMemory_v2_t m2{};
  m2.version = nvmlMemory_v2;
  nvmlMemory_t m{};
  if (fn.DeviceGetMemoryInfoV2 &&
      fn.DeviceGetMemoryInfoV2(dev, &m2) == NVML_SUCCESS) {
    s.memory_used_bytes = m2.used;
    s.memory_total_bytes = m2.total;
  } else if (rd.Ok("nvmlDeviceGetMemoryInfo",
                   fn.DeviceGetMemoryInfo(dev, &m))) {
    s.memory_used_bytes = m.used;
    s.memory_total_bytes = m.total;
  }
  unsigned v = 0;
  if (fn.DeviceGetPowerUsage &&
      rd.Ok("nvmlDeviceGetPowerUsage", fn.DeviceGetPowerUsage(dev, &v))) {
    s.power_watts = v / 1000.0;  // milliwatts
  }
  if (fn.DeviceGetTemperature &&
      rd.Ok("nvmlDeviceGetTemperature",
            fn.DeviceGetTemperature(dev, NVML_TEMPERATURE_GPU, &v))) {
    s.temperature_celsius = v;
  }
  if (fn.DeviceGetClockInfo &&
      rd.Ok("nvmlDeviceGetClockInfo",
            fn.DeviceGetClockInfo(dev, NVML_CLOCK_SM, &v))) {
    s.sm_clock_hertz = v * 1e6;  // MHz
  }
  if (fn.DeviceGetPcieThroughput) {
    // NVML's "KB" here is 1024 bytes.
    if (rd.Ok("nvmlDeviceGetPcieThroughput",
              fn.DeviceGetPcieThroughput(dev, NVML_PCIE_UTIL_TX_BYTES, &v))) {
      s.pcie_transmit_bytes_per_second = v * 1024.0;
    }
    if (rd.Ok("nvmlDeviceGetPcieThroughput",
              fn.DeviceGetPcieThroughput(dev, NVML_PCIE_UTIL_RX_BYTES, &v))) {
      s.pcie_receive_bytes_per_second = v * 1024.0;
    }
  }
  ReadFieldValues(fn, dev, rd, s);
  out.sample = std::move(s);
  ReadProcesses(fn, dev, rd, memo, out);
  if (out.lost) {
    out.sample.reset();
    out.processes.clear();
  }
  return out;
}

}  // namespace trainscope
