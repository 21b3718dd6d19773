#include "profile_endpoint.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "profiler/outputs.h"

namespace trainscope {
namespace {

HttpResponse Text(int status, std::string body) {
  return HttpResponse{status, "text/plain; charset=utf-8",
                      std::move(body) + "\n"};
}

// A pod found by --discovery cgroup has no namespace and its UID for a
// name (as /api/v1/pods lists it): `namespace` may then be left out.
constexpr const char* kPodRequired =
    "pod is required: ?namespace=NS&pod=POD (a pod found by --discovery "
    "cgroup: ?pod=UID)";

// "ns/pod", or the UID alone for a pod without namespace.
std::string PodRef(const std::string& ns, const std::string& pod) {
  return ns.empty() ? pod : ns + "/" + pod;
}

HttpResponse NotOnThisNode(const std::string& ns, const std::string& pod,
                           const std::string& node) {
  std::string body =
      "pod " + Printable(PodRef(ns, pod)) + " is not running on node " + node;
  if (ns.empty()) {
    body +=
        " (without namespace=, pod= is the UID of a pod found by "
        "--discovery cgroup)";
  }
  return Text(404, std::move(body));
}

// A plain decimal number ("2.5", "1e1"): no hex, no leading space or sign
// games, nothing non-finite.
bool ParseNumber(const std::string& text, double* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out,
                                   std::chars_format::general);
  return ec == std::errc() && end == text.data() + text.size() &&
         std::isfinite(*out);
}

bool ParseInt(const std::string& text, int* out) {
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

bool ParseProfileQuery(const HttpRequest& req,
                       const profiler::ProfilerOptions& limits,
                       ProfileQuery* out, std::string* error) {
  auto& r = out->request;
  r.namespace_name = req.Query("namespace");
  r.pod = req.Query("pod");
  if (r.pod.empty()) {
    *error = std::string(kPodRequired) + "&seconds=S";
    return false;
  }
  const std::string seconds = req.Query("seconds");
  r.seconds = 10;
  if (!seconds.empty() && (!ParseNumber(seconds, &r.seconds) ||
                           r.seconds < 0.1 || r.seconds > limits.max_seconds)) {
    *error = "seconds must be a number from 0.1 to " +
             std::to_string(limits.max_seconds) +
             " (--profile-max-seconds), got '" + Printable(seconds) + "'";
    return false;
  }
  auto kind = profiler::ParseProfileKind(req.Query("type"));
  if (!kind) {
    *error = "type must be cpu or offcpu, got '" +
             Printable(req.Query("type")) + "'";
    return false;
  }
  r.kind = *kind;
  r.hz = std::min(limits.default_hz, limits.max_hz);
  const std::string hz = req.Query("hz");
  if (!hz.empty() &&
      (!ParseInt(hz, &r.hz) || r.hz < 1 || r.hz > limits.max_hz)) {
    *error = "hz must be an integer from 1 to " +
             std::to_string(limits.max_hz) + ", got '" + Printable(hz) + "'";
    return false;
  }
  out->format = req.Query("format").empty() ? "pprof" : req.Query("format");
  if (out->format != "pprof" && out->format != "folded" &&
      out->format != "svg") {
    *error = "format must be pprof, folded or svg, got '" +
             Printable(out->format) + "'";
    return false;
  }
  return true;
}

bool ParseProfileTopQuery(const HttpRequest& req, ProfileTopQuery* out,
                          std::string* error) {
  out->namespace_name = req.Query("namespace");
  out->pod = req.Query("pod");
  if (out->pod.empty()) {
    *error = kPodRequired;
    return false;
  }
  if (const std::string n = req.Query("n");
      !n.empty() && (!ParseInt(n, &out->n) || out->n < 1 || out->n > 100)) {
    *error = "n must be an integer from 1 to 100, got '" + Printable(n) + "'";
    return false;
  }
  out->type = req.Query("type").empty() ? "cpu" : req.Query("type");
  if (out->type != "cpu" && out->type != "offcpu") {
    *error = "type must be cpu or offcpu, got '" + Printable(out->type) + "'";
    return false;
  }
  return true;
}

HttpResponse RenderProfile(const profiler::Profile& profile,
                           const std::string& format,
                           const std::string& title) {
  if (format == "folded") {
    return {200, "text/plain; charset=utf-8", profiler::FoldedStacks(profile)};
  }
  if (format == "svg") {
    const std::string unit = profile.type == "cpu" ? "samples" : "ns";
    return {
        200, "image/svg+xml",
        profiler::FlameGraphSvg(profiler::FoldedStacks(profile), title, unit)};
  }
  // Already gzipped (the pprof wire format): octet-stream is never
  // compressed again by the server.
  return {200,
          "application/octet-stream",
          profiler::EncodePprofGzip(profile),
          {{"Content-Disposition", "attachment; filename=\"profile.pb.gz\""}}};
}

void ServeProfile(const std::shared_ptr<profiler::ProfilerService>& profiler,
                  const PodList& pods, const std::string& node,
                  const HttpRequest& req, HttpReply reply) {
  if (!profiler) {
    reply(Text(503, "the profiler is off on this node (--profiler off)"));
    return;
  }
  ProfileQuery query;
  std::string error;
  if (!ParseProfileQuery(req, profiler->options(), &query, &error)) {
    reply(Text(400, error));
    return;
  }
  query.request.abandoned = req.client_gone;
  const auto& r = query.request;
  const PodInfo* pod = nullptr;
  for (const PodInfo& p : pods) {
    if (p.namespace_name == r.namespace_name && p.name == r.pod) pod = &p;
  }
  if (!pod) {
    reply(NotOnThisNode(r.namespace_name, r.pod, node));
    return;
  }
  const std::string title =
      std::string(r.kind == profiler::ProfileKind::kCpu ? "CPU" : "Off-CPU") +
      " profile of " + PodRef(r.namespace_name, r.pod);
  profiler->Start(
      r, *pod,
      [reply, format = query.format, title](profiler::ProfileOutcome outcome) {
        if (outcome.http_status != 200) {
          reply(Text(outcome.http_status, outcome.error));
          return;
        }
        reply(RenderProfile(outcome.profile, format, title));
      });
}

nlohmann::json TopFunctionsEvidence(
    const profiler::TopFunctionWindow::Top& top) {
  if (top.samples == 0) return nullptr;
  nlohmann::json functions = nlohmann::json::array();
  for (const auto& f : top.functions) {
    functions.push_back({{"function", f.function},
                         {"share", std::round(f.share * 1000) / 1000},
                         {"samples", f.samples}});
  }
  return {{"top_functions", functions},
          {"profile_samples", top.samples},
          {"profile_window_seconds", std::round(top.window_seconds)}};
}

nlohmann::json WaitSitesEvidence(const profiler::TopFunctionWindow::Top& top) {
  if (top.samples == 0) return nullptr;
  nlohmann::json sites = nlohmann::json::array();
  for (const auto& f : top.functions) {
    sites.push_back({{"site", f.function},
                     {"share", std::round(f.share * 1000) / 1000},
                     {"seconds", std::round(f.samples / 1e6) / 1000}});
  }
  return {{"top_wait_sites", sites},
          {"offcpu_seconds", std::round(top.samples / 1e6) / 1000}};
}

HttpResponse ServeProfileTop(
    const std::shared_ptr<profiler::ContinuousProfiler>& continuous,
    const PodList& pods, const std::string& node, const HttpRequest& req) {
  if (!continuous) {
    return Text(503,
                "continuous profiling is off on this node "
                "(--profile-continuous off or --profiler off)");
  }
  ProfileTopQuery query;
  if (std::string error; !ParseProfileTopQuery(req, &query, &error)) {
    return Text(400, error);
  }
  const std::string &ns = query.namespace_name, &name = query.pod,
                    &type = query.type;
  const int n = query.n;
  if (type == "offcpu" && !continuous->options().offcpu) {
    return Text(503,
                "continuous off-CPU profiling is off on this node "
                "(--profile-continuous-offcpu on enables it)");
  }
  for (const PodInfo& p : pods) {
    if (p.namespace_name != ns || p.name != name) continue;
    const auto top =
        type == "cpu" ? continuous->TopOf(p.uid, static_cast<size_t>(n))
                      : continuous->TopWaitsOf(p.uid, static_cast<size_t>(n));
    nlohmann::json body = {{"namespace", ns},
                           {"pod", name},
                           {"node", node},
                           {"type", type},
                           {"unit", type == "cpu" ? "samples" : "nanoseconds"},
                           {"hz", continuous->options().hz},
                           {"samples", top.samples},
                           {"window_seconds", std::round(top.window_seconds)},
                           {"functions", nlohmann::json::array()}};
    for (const auto& f : top.functions) {
      body["functions"].push_back({{"function", f.function},
                                   {"samples", f.samples},
                                   {"share", f.share}});
    }
    return {200, "application/json", body.dump()};
  }
  return NotOnThisNode(ns, name, node);
}

}  // namespace trainscope
