// trainscope profile --agent URL --pod NS/POD [--seconds S] [--type cpu|offcpu]
//                    [--hz N] [--format pprof|folded|svg] [--output FILE]
// Asks one agent for a profile of a pod on its node and saves it.
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/report_http.h"

namespace trainscope {
namespace {

struct ProfileFlags {
  std::string agent;
  std::string pod;  // NS/POD
  double seconds = 10;
  std::string type = "cpu";
  int hz = 0;  // 0: the agent's default
  std::string format = "pprof";
  std::string output = "-";
  cli::HttpClientFlags client;
};

int Fail(const std::string& message, int code = 1) {
  std::cerr << "trainscope profile: " << message << "\n";
  return code;
}

int Run(const ProfileFlags& flags) {
  const size_t slash = flags.pod.find('/');
  if (slash == std::string::npos || slash == 0 ||
      slash + 1 == flags.pod.size()) {
    return Fail("--pod must be NAMESPACE/POD, got '" + flags.pod + "'", 2);
  }
  cli::HttpTarget target;
  if (Status s = cli::ParseHttpUrl(flags.agent, &target); !s.ok()) {
    return Fail("--agent: " + s.message(), 2);
  }
  if (Status s = cli::ApplyHttpClientFlags(flags.client, &target); !s.ok()) {
    return Fail(s.message(), 2);
  }
  httplib::Params query{{"namespace", flags.pod.substr(0, slash)},
                        {"pod", flags.pod.substr(slash + 1)},
                        {"seconds", std::to_string(flags.seconds)},
                        {"type", flags.type},
                        {"format", flags.format}};
  if (flags.hz > 0) query.emplace("hz", std::to_string(flags.hz));
  httplib::Client client(target.origin);
  client.set_connection_timeout(5, 0);
  // The agent answers when the profile ends, plus symbolization time.
  client.set_read_timeout(static_cast<time_t>(flags.seconds) + 60, 0);
  if (!target.ca_file.empty()) client.set_ca_cert_path(target.ca_file);
  httplib::Headers headers(target.headers.begin(), target.headers.end());
  const std::string path = target.base_path + "/api/v1/profile";
  auto res = client.Get(path, query, headers);
  if (!res) {
    return Fail("cannot reach " + target.origin + path + ": " +
                httplib::to_string(res.error()));
  }
  if (res->status != 200) {
    std::string body = res->body;
    while (!body.empty() && body.back() == '\n') body.pop_back();
    return Fail("the agent answered HTTP " + std::to_string(res->status) +
                ": " + body);
  }
  if (flags.output == "-") {
    std::cout << res->body << std::flush;
    return std::cout ? 0 : Fail("writing to stdout failed");
  }
  std::ofstream out(flags.output, std::ios::binary);
  out << res->body;
  out.close();
  if (!out) return Fail("cannot write " + flags.output);
  std::cerr << "trainscope profile: wrote " << res->body.size() << " bytes ("
            << flags.format << ") to " << flags.output << "\n";
  return 0;
}

}  // namespace

int RunProfileCommand(int argc, char** argv) {
  ProfileFlags flags;
  CLI::App app{
      "Profile a pod from its node's agent: CPU (where it computes) or "
      "off-CPU (where it waits: runnable vs blocked). Output: gzipped pprof "
      "(go tool pprof, Pyroscope, Parca, speedscope), folded stacks, or an "
      "SVG flame graph. docs/profiling.md"};
  app.add_option("--agent", flags.agent,
                 "The agent on the pod's node, e.g. http://node-a:9476")
      ->required();
  app.add_option("--pod", flags.pod, "NAMESPACE/POD")->required();
  app.add_option("--seconds", flags.seconds,
                 "How long to profile (the agent caps it: "
                 "--profile-max-seconds, 60 by default)")
      ->capture_default_str();
  app.add_option("--type", flags.type, "cpu or offcpu")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "offcpu"}));
  app.add_option("--hz", flags.hz,
                 "CPU samples per second per CPU (default: the agent's, 99)");
  app.add_option("--format", flags.format, "pprof, folded or svg")
      ->capture_default_str()
      ->check(CLI::IsMember({"pprof", "folded", "svg"}));
  app.add_option("--output,-o", flags.output, "File to write ('-': stdout)")
      ->capture_default_str();
  app.add_option("--bearer-token-file", flags.client.bearer_token_file,
                 "Send 'Authorization: Bearer <file content>'");
  app.add_option("--ca-file", flags.client.ca_file,
                 "CA bundle verifying an https agent");
  app.add_option("--header", flags.client.headers,
                 "Extra request header 'Name: value' (repeatable)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return Run(flags);
}

}  // namespace trainscope
