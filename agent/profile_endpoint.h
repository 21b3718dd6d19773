#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "http/routes.h"
#include "profiler/continuous_profiler.h"
#include "profiler/profiler_service.h"
#include "trainscope/pod.h"

namespace trainscope {

// GET /api/v1/profile?namespace=NS&pod=POD&seconds=S[&type=cpu|offcpu]
//                    [&hz=N][&format=pprof|folded|svg]
// (docs/profiling.md). The query, checked.
struct ProfileQuery {
  profiler::ProfileRequest request;
  std::string format = "pprof";
};

// Fills `out` or says what is wrong with the query (-> 400).
bool ParseProfileQuery(const HttpRequest& req,
                       const profiler::ProfilerOptions& limits,
                       ProfileQuery* out, std::string* error);

// Answers the request through `reply`: 400 for a bad query, 404 for a pod
// this node does not run, 409/429 when busy, 503 when profiling is
// unavailable (with the reason), else the profile in the asked format.
// `profiler` null: the profiler is off (--profiler off).
void ServeProfile(const std::shared_ptr<profiler::ProfilerService>& profiler,
                  const PodList& pods, const std::string& node,
                  const HttpRequest& req, HttpReply reply);

// The query of /api/v1/profile/top, checked.
struct ProfileTopQuery {
  std::string namespace_name;
  std::string pod;
  int n = 10;
  std::string type = "cpu";  // or "offcpu"
};
// Fills `out` or says what is wrong with the query (-> 400).
bool ParseProfileTopQuery(const HttpRequest& req, ProfileTopQuery* out,
                          std::string* error);

// GET /api/v1/profile/top?namespace=NS&pod=POD[&n=N][&type=cpu|offcpu]: the
// pod's top leaf functions (or off-CPU wait sites, in nanoseconds) in the
// continuous profile's window, as JSON. `continuous` null:
// 503 (--profile-continuous off).
HttpResponse ServeProfileTop(
    const std::shared_ptr<profiler::ContinuousProfiler>& continuous,
    const PodList& pods, const std::string& node, const HttpRequest& req);

// The top functions as report evidence: {"top_functions": [{"function",
// "share"}], "profile_samples": N, "profile_window_seconds": S}; null when
// the window has no samples of the pod.
nlohmann::json TopFunctionsEvidence(
    const profiler::TopFunctionWindow::Top& top);
// The off-CPU wait sites likewise: {"top_wait_sites": [{"site", "share",
// "seconds"}], "offcpu_seconds": S}; null when there are none.
nlohmann::json WaitSitesEvidence(const profiler::TopFunctionWindow::Top& top);

// The body and content type of a finished profile in `format`.
HttpResponse RenderProfile(const profiler::Profile& profile,
                           const std::string& format, const std::string& title);

}  // namespace trainscope
