// What an HTTP client controls once libmicrohttpd has parsed its request:
// the method, the path, the query parameters and Accept-Encoding, through
// the agent's route table (404/405/HEAD, gzip negotiation) and the query
// checks of every endpoint that takes parameters.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.h"
#include "http/routes.h"
#include "profile_endpoint.h"

namespace {

using trainscope::HttpRequest;
using trainscope::HttpResponse;

constexpr const char* kMethods[] = {"GET", "HEAD", "POST", "PUT", "OPTIONS"};

// Stand-ins for the agent's data; the parameter handling is the real one.
trainscope::HttpHandlers Handlers() {
  trainscope::HttpHandlers h;
  h.metrics = [] {
    return std::string(
        "# TYPE trainscope_up gauge\ntrainscope_up 1\n"
        "trainscope_pod_cpu_usage_seconds_total{pod=\"a\"} 1.5\n");
  };
  h.ready = [](std::string* why) {
    *why = "no sample yet";
    return false;
  };
  h.pods_json = [] { return std::string("{\"pods\":[]}"); };
  h.report = [](const std::string& format) {
    return HttpResponse{200, "text/plain", "report as " + format};
  };
  h.page = [] { return HttpResponse{200, "text/html", "<html></html>"}; };
  h.profile = [](const HttpRequest& req,
                 std::function<void(HttpResponse)> reply) {
    trainscope::ProfileQuery query;
    std::string error;
    const bool ok = trainscope::ParseProfileQuery(
        req, trainscope::profiler::ProfilerOptions{}, &query, &error);
    reply(HttpResponse{ok ? 200 : 400, "text/plain", error});
  };
  h.profile_top = [](const HttpRequest& req) {
    trainscope::ProfileTopQuery query;
    std::string error;
    const bool ok = trainscope::ParseProfileTopQuery(req, &query, &error);
    return HttpResponse{ok ? 200 : 400, "text/plain", error};
  };
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const trainscope::HttpRouter router(
      trainscope::AgentRoutes(Handlers()));
  trainscope::fuzz::FuzzInput input(data, size);
  HttpRequest req;
  req.method = kMethods[input.Byte() % std::size(kMethods)];
  req.path = std::string(input.Line());
  req.accept_encoding = std::string(input.Line());
  while (!input.empty()) {
    const std::string_view pair = input.Line();
    const size_t eq = pair.find('=');
    req.query[std::string(pair.substr(0, eq))] =
        eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1));
  }
  if (router.IsAsync(req.path)) {
    router.HandleAsync(req, [](HttpResponse) {});
  } else {
    (void)router.Handle(req);
  }
  return 0;
}
