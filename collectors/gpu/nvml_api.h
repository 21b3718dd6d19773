#pragma once

// The subset of the NVML C API that Trainscope uses, declared from NVML's
// documentation so that nothing from NVIDIA is needed at build time: the
// library is dlopen()ed at run time (nvml_library.h) and the tests load a
// fake with the same symbols (tests/fake_nvml). Layouts and values must match
// nvml.h exactly; they are part of NVML's stable ABI.

#include <cstdint>

extern "C" {

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlDevice_st* nvmlDevice_t;

// Sizes nvml.h recommends for the _v2 UUID and name buffers.
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96

// usedGpuMemory when the driver cannot tell (e.g. no permission).
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

typedef struct nvmlUtilization_st {
  unsigned int gpu;     // percent of time a kernel ran, last sample period
  unsigned int memory;  // percent of time device memory was read or written
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
  unsigned long long total;  // bytes
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

// nvml.h's versioned struct of nvmlDeviceGetMemoryInfo_v2: `reserved` is
// what the driver and firmware set aside. nvml.h says `used` includes it;
// on an H100 with driver 580 it does not: `used` is nvidia-smi's memory
// used, and nvmlMemory_t's `used` is that plus `reserved` (docs/gpu.md).
typedef struct nvmlMemory_v2_st {
  unsigned int version;  // nvmlMemory_v2
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;
#define NVML_STRUCT_VERSION(data, ver) \
  (unsigned int)(sizeof(nvml##data##_v##ver##_t) | (ver << 24U))
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)

// nvmlProcessInfo_v2_t, which nvml.h (API 12) also names nvmlProcessInfo_t:
// the struct that nvmlDeviceGetComputeRunningProcesses_v2 and _v3 fill. The
// unversioned (v1) call fills a two-field struct; we never call it.
typedef struct nvmlProcessInfo_st {
  unsigned int pid;  // host PID
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;      // MIG; 0xFFFFFFFF when not MIG
  unsigned int computeInstanceId;  // MIG; 0xFFFFFFFF when not MIG
} nvmlProcessInfo_t;

typedef struct nvmlProcessUtilizationSample_st {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp in microseconds
  unsigned int smUtil;           // percent
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef enum nvmlTemperatureSensors_enum {
  NVML_TEMPERATURE_GPU = 0,
} nvmlTemperatureSensors_t;

typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3,
} nvmlClockType_t;

typedef enum nvmlPcieUtilCounter_enum {
  NVML_PCIE_UTIL_TX_BYTES = 0,
  NVML_PCIE_UTIL_RX_BYTES = 1,
} nvmlPcieUtilCounter_t;

typedef enum nvmlValueType_enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
} nvmlValueType_t;

typedef union nvmlValue_st {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
} nvmlValue_t;

// Field ids (nvmlFieldValue_t::fieldId); NVML guarantees they never change.
#define NVML_FI_DEV_ECC_SBE_VOL_TOTAL 3
#define NVML_FI_DEV_ECC_DBE_VOL_TOTAL 4
#define NVML_FI_DEV_RETIRED_SBE 29
#define NVML_FI_DEV_RETIRED_DBE 30
#define NVML_FI_DEV_PCIE_REPLAY_COUNTER 94

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;
  unsigned int scopeId;  // "unused" in older headers; must be 0 here
  long long timestamp;   // microseconds since 1970
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;  // per field; value is undefined unless SUCCESS
  nvmlValue_t value;
} nvmlFieldValue_t;

typedef struct nvmlEventSet_st* nvmlEventSet_t;

// Event type bit for XID (driver-reported GPU error) events.
#define nvmlEventTypeXidCriticalError 0x0000000000000008LL

// The struct nvmlEventSetWait_v2 fills (API 11+ layout).
typedef struct nvmlEventData_st {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID; 999 for an unknown one
  unsigned int gpuInstanceId;    // MIG; 0xFFFFFFFF otherwise
  unsigned int computeInstanceId;
} nvmlEventData_t;

// Function types, named after the symbols the library exports.
typedef nvmlReturn_t (*nvmlInit_v2_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t result);
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int* deviceCount);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int index,
                                                         nvmlDevice_t* device);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t device, char* uuid,
                                             unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t device, char* name,
                                             unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetUtilizationRates_fn)(
    nvmlDevice_t device, nvmlUtilization_t* utilization);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t device,
                                                   nvmlMemory_t* memory);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_v2_fn)(nvmlDevice_t device,
                                                      nvmlMemory_v2_t* memory);
// Milliwatts.
typedef nvmlReturn_t (*nvmlDeviceGetPowerUsage_fn)(nvmlDevice_t device,
                                                   unsigned int* power);
// Degrees Celsius.
typedef nvmlReturn_t (*nvmlDeviceGetTemperature_fn)(
    nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
    unsigned int* temp);
// MHz.
typedef nvmlReturn_t (*nvmlDeviceGetClockInfo_fn)(nvmlDevice_t device,
                                                  nvmlClockType_t type,
                                                  unsigned int* clock);
// KB/s over the last 20 ms sampling window.
typedef nvmlReturn_t (*nvmlDeviceGetPcieThroughput_fn)(
    nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int* value);
// Symbols nvmlDeviceGetComputeRunningProcesses_v3 and _v2 (same struct).
typedef nvmlReturn_t (*nvmlDeviceGetComputeRunningProcesses_fn)(
    nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos);
typedef nvmlReturn_t (*nvmlDeviceGetProcessUtilization_fn)(
    nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization,
    unsigned int* processSamplesCount, unsigned long long lastSeenTimeStamp);
typedef nvmlReturn_t (*nvmlDeviceGetFieldValues_fn)(nvmlDevice_t device,
                                                    int valuesCount,
                                                    nvmlFieldValue_t* values);

typedef nvmlReturn_t (*nvmlEventSetCreate_fn)(nvmlEventSet_t* set);
typedef nvmlReturn_t (*nvmlDeviceRegisterEvents_fn)(
    nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set);
typedef nvmlReturn_t (*nvmlEventSetWait_v2_fn)(nvmlEventSet_t set,
                                               nvmlEventData_t* data,
                                               unsigned int timeoutms);
typedef nvmlReturn_t (*nvmlEventSetFree_fn)(nvmlEventSet_t set);

}  // extern "C"
