/*
 * gpm_probe: what NVML's GPM interface (Hopper and newer) gives on this
 * machine.
 *
 * Groundwork for issue 38 (GPM collector, fake NVML with GPM). Not part of the
 * agent and not built by CMake: compile it on the build machine with
 *
 *   gcc -O2 -Wall -o .device-carry/gpm_probe tests/device/gpm_probe.c -ldl
 *
 * and carry the binary to a GPU machine (tests/device/run.sh). It needs only
 * glibc and dlopen: libnvidia-ml.so.1 is loaded at run time, and every NVML
 * type it uses is declared below from NVML's documented API (nvml.h / the
 * NVML API reference, "GPM Structs", "GPM Enums", "GPM Functions").
 *
 * Usage: gpm_probe [label] [interval_ms]   (defaults: "probe", 1000)
 *
 * For each device: name, MIG mode, GPM support, then one GPM sample, a sleep
 * of interval_ms, a second sample, nvmlGpmMetricsGet over the metrics below,
 * one line per metric (id, name, unit, return code, value), and
 * nvmlDeviceGetUtilizationRates for comparison. Every failure is printed with
 * nvmlErrorString; missing symbols are reported, never called.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- NVML declarations, written from the documented API ---------------- */

typedef int nvmlReturn_t; /* enum nvmlReturn_t: 0 = NVML_SUCCESS */
#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_FUNCTION_NOT_FOUND 13

typedef struct nvmlDevice_st *nvmlDevice_t;       /* opaque handle */
typedef struct nvmlGpmSample_st *nvmlGpmSample_t; /* opaque sample buffer */

typedef struct {
  unsigned int gpu;    /* percent of time a kernel was running */
  unsigned int memory; /* percent of time device memory was read or written */
} nvmlUtilization_t;

/* nvmlGpmSupport_t, NVML_GPM_SUPPORT_VERSION 1 */
#define NVML_GPM_SUPPORT_VERSION 1
typedef struct {
  unsigned int version;           /* IN */
  unsigned int isSupportedDevice; /* OUT */
} nvmlGpmSupport_t;

/* nvmlGpmMetric_t: one entry of nvmlGpmMetricsGet_t.metrics[] */
typedef struct {
  unsigned int metricId;   /* IN: NVML_GPM_METRIC_* */
  nvmlReturn_t nvmlReturn; /* OUT: status of this metric */
  double value;            /* OUT: valid only when nvmlReturn == SUCCESS */
  struct {
    char *shortName;
    char *longName;
    char *unit;
  } metricInfo; /* OUT: may be NULL */
} nvmlGpmMetric_t;

/*
 * NVML_GPM_METRIC_MAX is the last enumerator of nvmlGpmMetricId_t plus one:
 * 98 in the CUDA 12.0-era nvml.h, 333 in later ones. The library fills only
 * numMetrics entries; the array is sized for the larger value so that it is
 * big enough under either header.
 */
#define PROBE_GPM_METRIC_MAX 333
#define NVML_GPM_METRICS_GET_VERSION 1
typedef struct {
  unsigned int version;    /* IN: NVML_GPM_METRICS_GET_VERSION */
  unsigned int numMetrics; /* IN: entries used in metrics[] */
  nvmlGpmSample_t sample1; /* IN */
  nvmlGpmSample_t sample2; /* IN */
  nvmlGpmMetric_t metrics[PROBE_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

/* nvmlGpmMetricId_t values (NVML API reference, "GPM Enums") */
static const struct {
  unsigned int id;
  const char *name;
} kMetrics[] = {
    {1, "GRAPHICS_UTIL"},
    {2, "SM_UTIL"},
    {3, "SM_OCCUPANCY"},
    {4, "INTEGER_UTIL"},
    {5, "ANY_TENSOR_UTIL"},
    {6, "DFMA_TENSOR_UTIL"},
    {7, "HMMA_TENSOR_UTIL"},
    {8, "DMMA_TENSOR_UTIL"}, /* in newer headers only */
    {9, "IMMA_TENSOR_UTIL"},
    {10, "DRAM_BW_UTIL"},
    {11, "FP64_UTIL"},
    {12, "FP32_UTIL"},
    {13, "FP16_UTIL"},
    {20, "PCIE_TX_PER_SEC"},
    {21, "PCIE_RX_PER_SEC"},
    {60, "NVLINK_TOTAL_RX_PER_SEC"},
    {61, "NVLINK_TOTAL_TX_PER_SEC"},
};
#define NUM_METRICS (sizeof kMetrics / sizeof kMetrics[0])

/* ---- function table ----------------------------------------------------- */

static struct {
  nvmlReturn_t (*Init)(void);
  nvmlReturn_t (*Shutdown)(void);
  const char *(*ErrorString)(nvmlReturn_t);
  nvmlReturn_t (*SystemGetDriverVersion)(char *, unsigned int);
  nvmlReturn_t (*DeviceGetCount)(unsigned int *);
  nvmlReturn_t (*DeviceGetHandleByIndex)(unsigned int, nvmlDevice_t *);
  nvmlReturn_t (*DeviceGetName)(nvmlDevice_t, char *, unsigned int);
  nvmlReturn_t (*DeviceGetUtilizationRates)(nvmlDevice_t, nvmlUtilization_t *);
  nvmlReturn_t (*DeviceGetMigMode)(nvmlDevice_t, unsigned int *,
                                   unsigned int *);
  nvmlReturn_t (*GpmQueryDeviceSupport)(nvmlDevice_t, nvmlGpmSupport_t *);
  nvmlReturn_t (*GpmSampleAlloc)(nvmlGpmSample_t *);
  nvmlReturn_t (*GpmSampleFree)(nvmlGpmSample_t);
  nvmlReturn_t (*GpmSampleGet)(nvmlDevice_t, nvmlGpmSample_t);
  nvmlReturn_t (*GpmMetricsGet)(nvmlGpmMetricsGet_t *);
} nv;

static const char *label = "probe";

static const char *err(nvmlReturn_t r) {
  if (nv.ErrorString) {
    const char *s = nv.ErrorString(r);
    if (s) return s;
  }
  return "(no nvmlErrorString)";
}

static void *sym(void *lib, const char *name, int *missing) {
  void *p = dlsym(lib, name);
  if (!p) {
    printf("[%s] symbol %s: MISSING\n", label, name);
    ++*missing;
  }
  return p;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_util(unsigned int i, nvmlDevice_t dev, const char *when) {
  if (!nv.DeviceGetUtilizationRates) {
    printf("[%s] gpu %u util(%s): nvmlDeviceGetUtilizationRates missing\n",
           label, i, when);
    return;
  }
  nvmlUtilization_t u = {0, 0};
  nvmlReturn_t r = nv.DeviceGetUtilizationRates(dev, &u);
  if (r == NVML_SUCCESS)
    printf("[%s] gpu %u util(%s): gpu=%u%% memory=%u%%\n", label, i, when,
           u.gpu, u.memory);
  else
    printf("[%s] gpu %u util(%s): ret=%d (%s)\n", label, i, when, r, err(r));
}

static void print_metric(unsigned int i, const nvmlGpmMetric_t *m,
                         const char *name) {
  const char *sn = m->metricInfo.shortName ? m->metricInfo.shortName : "-";
  const char *un = m->metricInfo.unit ? m->metricInfo.unit : "-";
  if (m->nvmlReturn == NVML_SUCCESS)
    printf("[%s] gpu %u gpm id=%u %s short=%s unit=%s ret=0 (%s) value=%.3f\n",
           label, i, m->metricId, name, sn, un, err(m->nvmlReturn), m->value);
  else
    printf("[%s] gpu %u gpm id=%u %s short=%s unit=%s ret=%d (%s) value=-\n",
           label, i, m->metricId, name, sn, un, m->nvmlReturn,
           err(m->nvmlReturn));
}

static void probe_gpm(unsigned int i, nvmlDevice_t dev, long interval_ms) {
  nvmlGpmSupport_t sup;
  memset(&sup, 0, sizeof sup);
  sup.version = NVML_GPM_SUPPORT_VERSION;
  nvmlReturn_t r = nv.GpmQueryDeviceSupport(dev, &sup);
  if (r != NVML_SUCCESS) {
    printf("[%s] gpu %u gpm support: query failed ret=%d (%s)\n", label, i, r,
           err(r));
    return;
  }
  printf("[%s] gpu %u gpm support: isSupportedDevice=%u\n", label, i,
         sup.isSupportedDevice);
  if (!sup.isSupportedDevice) {
    printf("[%s] gpu %u gpm: NOT SUPPORTED on this device, no metrics\n", label,
           i);
    return;
  }

  nvmlGpmSample_t s1 = NULL, s2 = NULL;
  if ((r = nv.GpmSampleAlloc(&s1)) != NVML_SUCCESS) {
    printf("[%s] gpu %u nvmlGpmSampleAlloc(1): ret=%d (%s)\n", label, i, r,
           err(r));
    return;
  }
  if ((r = nv.GpmSampleAlloc(&s2)) != NVML_SUCCESS) {
    printf("[%s] gpu %u nvmlGpmSampleAlloc(2): ret=%d (%s)\n", label, i, r,
           err(r));
    nv.GpmSampleFree(s1);
    return;
  }

  double t0 = now_s();
  r = nv.GpmSampleGet(dev, s1);
  double t1 = now_s();
  printf("[%s] gpu %u nvmlGpmSampleGet(1): ret=%d (%s) took %.3f ms\n", label,
         i, r, err(r), (t1 - t0) * 1e3);
  if (r == NVML_SUCCESS) {
    sleep_ms(interval_ms);
    double t2 = now_s();
    r = nv.GpmSampleGet(dev, s2);
    double t3 = now_s();
    printf(
        "[%s] gpu %u nvmlGpmSampleGet(2): ret=%d (%s) took %.3f ms, %.3f s "
        "after sample 1\n",
        label, i, r, err(r), (t3 - t2) * 1e3, t3 - t0);
    print_util(i, dev, "end of GPM window");
  }
  if (r == NVML_SUCCESS) {
    /* All metrics in one call, as a collector would do. */
    nvmlGpmMetricsGet_t *mg = calloc(1, sizeof *mg);
    if (!mg) {
      printf("[%s] out of memory\n", label);
      goto out;
    }
    mg->version = NVML_GPM_METRICS_GET_VERSION;
    mg->numMetrics = NUM_METRICS;
    mg->sample1 = s1;
    mg->sample2 = s2;
    for (unsigned int k = 0; k < NUM_METRICS; ++k)
      mg->metrics[k].metricId = kMetrics[k].id;
    double t4 = now_s();
    r = nv.GpmMetricsGet(mg);
    double t5 = now_s();
    printf(
        "[%s] gpu %u nvmlGpmMetricsGet(%u metrics): ret=%d (%s) took %.3f ms\n",
        label, i, (unsigned)NUM_METRICS, r, err(r), (t5 - t4) * 1e3);
    if (r == NVML_SUCCESS) {
      for (unsigned int k = 0; k < NUM_METRICS; ++k)
        print_metric(i, &mg->metrics[k], kMetrics[k].name);
    } else {
      /* The batch failed: ask one metric at a time to see which one NVML
       * refuses. */
      for (unsigned int k = 0; k < NUM_METRICS; ++k) {
        memset(mg, 0, sizeof *mg);
        mg->version = NVML_GPM_METRICS_GET_VERSION;
        mg->numMetrics = 1;
        mg->sample1 = s1;
        mg->sample2 = s2;
        mg->metrics[0].metricId = kMetrics[k].id;
        nvmlReturn_t r1 = nv.GpmMetricsGet(mg);
        if (r1 == NVML_SUCCESS)
          print_metric(i, &mg->metrics[0], kMetrics[k].name);
        else
          printf("[%s] gpu %u gpm id=%u %s alone: call ret=%d (%s)\n", label, i,
                 kMetrics[k].id, kMetrics[k].name, r1, err(r1));
      }
    }
    free(mg);
  }
out:
  if ((r = nv.GpmSampleFree(s1)) != NVML_SUCCESS)
    printf("[%s] gpu %u nvmlGpmSampleFree(1): ret=%d (%s)\n", label, i, r,
           err(r));
  if ((r = nv.GpmSampleFree(s2)) != NVML_SUCCESS)
    printf("[%s] gpu %u nvmlGpmSampleFree(2): ret=%d (%s)\n", label, i, r,
           err(r));
}

int main(int argc, char **argv) {
  long interval_ms = 1000;
  if (argc > 1) label = argv[1];
  if (argc > 2) {
    interval_ms = strtol(argv[2], NULL, 10);
    if (interval_ms < 1 || interval_ms > 60000) interval_ms = 1000;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf(
      "[%s] gpm_probe: interval %ld ms, sizeof(nvmlGpmMetric_t)=%zu, "
      "sizeof(nvmlGpmMetricsGet_t)=%zu\n",
      label, interval_ms, sizeof(nvmlGpmMetric_t), sizeof(nvmlGpmMetricsGet_t));

  void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("[%s] dlopen(libnvidia-ml.so.1) failed: %s\n", label, dlerror());
    return 2;
  }
  int missing = 0, gpm_missing = 0;
  nv.ErrorString = sym(lib, "nvmlErrorString", &missing);
  nv.Init = sym(lib, "nvmlInit_v2", &missing);
  nv.Shutdown = sym(lib, "nvmlShutdown", &missing);
  nv.SystemGetDriverVersion = sym(lib, "nvmlSystemGetDriverVersion", &missing);
  nv.DeviceGetCount = sym(lib, "nvmlDeviceGetCount_v2", &missing);
  nv.DeviceGetHandleByIndex =
      sym(lib, "nvmlDeviceGetHandleByIndex_v2", &missing);
  nv.DeviceGetName = sym(lib, "nvmlDeviceGetName", &missing);
  nv.DeviceGetUtilizationRates =
      sym(lib, "nvmlDeviceGetUtilizationRates", &missing);
  nv.DeviceGetMigMode = sym(lib, "nvmlDeviceGetMigMode", &missing);
  nv.GpmQueryDeviceSupport =
      sym(lib, "nvmlGpmQueryDeviceSupport", &gpm_missing);
  nv.GpmSampleAlloc = sym(lib, "nvmlGpmSampleAlloc", &gpm_missing);
  nv.GpmSampleFree = sym(lib, "nvmlGpmSampleFree", &gpm_missing);
  nv.GpmSampleGet = sym(lib, "nvmlGpmSampleGet", &gpm_missing);
  nv.GpmMetricsGet = sym(lib, "nvmlGpmMetricsGet", &gpm_missing);

  if (!nv.Init || !nv.DeviceGetCount || !nv.DeviceGetHandleByIndex) {
    printf("[%s] NVML lacks init/count/handle functions, stopping\n", label);
    return 2;
  }
  nvmlReturn_t r = nv.Init();
  if (r != NVML_SUCCESS) {
    printf("[%s] nvmlInit_v2: ret=%d (%s)\n", label, r, err(r));
    return 2;
  }
  if (nv.SystemGetDriverVersion) {
    char ver[96] = "";
    r = nv.SystemGetDriverVersion(ver, sizeof ver);
    if (r == NVML_SUCCESS)
      printf("[%s] driver %s\n", label, ver);
    else
      printf("[%s] nvmlSystemGetDriverVersion: ret=%d (%s)\n", label, r,
             err(r));
  }
  unsigned int count = 0;
  r = nv.DeviceGetCount(&count);
  if (r != NVML_SUCCESS) {
    printf("[%s] nvmlDeviceGetCount_v2: ret=%d (%s)\n", label, r, err(r));
    count = 0;
  }
  printf("[%s] devices %u\n", label, count);

  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t dev = NULL;
    r = nv.DeviceGetHandleByIndex(i, &dev);
    if (r != NVML_SUCCESS) {
      printf("[%s] gpu %u handle: ret=%d (%s)\n", label, i, r, err(r));
      continue;
    }
    if (nv.DeviceGetName) {
      char name[96] = "";
      r = nv.DeviceGetName(dev, name, sizeof name);
      if (r == NVML_SUCCESS)
        printf("[%s] gpu %u name %s\n", label, i, name);
      else
        printf("[%s] gpu %u name: ret=%d (%s)\n", label, i, r, err(r));
    }
    if (nv.DeviceGetMigMode) {
      unsigned int cur = 0, pend = 0;
      r = nv.DeviceGetMigMode(dev, &cur, &pend);
      if (r == NVML_SUCCESS)
        printf("[%s] gpu %u mig mode current=%u pending=%u\n", label, i, cur,
               pend);
      else
        printf("[%s] gpu %u mig mode: ret=%d (%s)\n", label, i, r, err(r));
    }
    print_util(i, dev, "before GPM window");
    if (gpm_missing)
      printf(
          "[%s] gpu %u gpm: %d GPM function(s) missing from this libnvidia-ml, "
          "GPM unavailable\n",
          label, i, gpm_missing);
    else
      probe_gpm(i, dev, interval_ms);
  }

  if (nv.Shutdown) {
    r = nv.Shutdown();
    if (r != NVML_SUCCESS)
      printf("[%s] nvmlShutdown: ret=%d (%s)\n", label, r, err(r));
  }
  printf("[%s] done (%d core symbol(s) missing, %d GPM symbol(s) missing)\n",
         label, missing, gpm_missing);
  return 0;
}
