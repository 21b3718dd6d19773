// trainscope profile --agent URL|--kubeconfig FILE --pod NS/POD|UID
//                    [--seconds S] [--type
// cpu|offcpu]
//                    [--hz N] [--format pprof|folded|svg] [--output FILE]
//                    [--timeout S] [--max-response-bytes N]
// Asks one agent for a profile of a pod on its node and saves it.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "cli/cli_flags.h"
#include "cli/commands.h"
#include "cli/http_fetch.h"
#include "cli/kube_proxy.h"
#include "cli/report_http.h"
#include "cli/server_text.h"

namespace trainscope {
namespace {

// The agent answers when the profile ends, plus symbolization time.
constexpr double kAnswerMarginSeconds = 60;
constexpr double kMaxProfileSeconds = 86400;
constexpr uint64_t kMaxHz = 100000;

struct ProfileFlags {
  std::string agent;
  cli::KubeProxyFlags kube;  // --kubeconfig: the agent on the pod's node
  std::string pod;           // NS/POD
  double seconds = 10;
  std::string type = "cpu";
  int hz = 0;  // 0: the agent's default
  std::string format = "pprof";
  std::string output = "-";
  cli::HttpClientFlags client;
  cli::HttpLimits limits;
  bool timeout_given = false;  // else --seconds + kAnswerMarginSeconds
};

int Fail(const std::string& message, int code = 1) {
  std::cerr << "trainscope profile: " << message << "\n";
  return code;
}

// The agent on the pod's node, through the API server's pod proxy.
int KubeAgentTarget(const ProfileFlags& flags, const std::string& pod_namespace,
                    const std::string& pod_name, cli::HttpTarget* target) {
  if (pod_namespace.empty()) {
    return Fail(
        "--kubeconfig needs --pod NAMESPACE/POD (the API server knows its "
        "node)",
        2);
  }
  cli::AgentPod agent;
  bool usage_error = false;
  if (Status s = cli::AgentThroughApiServer(
          flags.kube, flags.limits,
          {.pod_namespace = pod_namespace, .pod_name = pod_name}, target,
          &agent, &usage_error);
      !s.ok()) {
    return Fail(s.message(), usage_error ? 2 : 1);
  }
  return 0;
}

int Run(ProfileFlags flags) {
  // NAMESPACE/POD, or a pod found by --discovery cgroup: its UID alone (it
  // has no namespace; /api/v1/pods lists it so).
  const size_t slash = flags.pod.find('/');
  if (flags.pod.empty() || slash == 0 || slash + 1 == flags.pod.size() ||
      (slash != std::string::npos &&
       flags.pod.find('/', slash + 1) != std::string::npos)) {
    return Fail(
        "--pod must be NAMESPACE/POD (or the UID of a pod found by "
        "--discovery cgroup), got '" +
            flags.pod + "'",
        2);
  }
  const std::string pod_namespace =
      slash == std::string::npos ? "" : flags.pod.substr(0, slash);
  const std::string pod_name =
      slash == std::string::npos ? flags.pod : flags.pod.substr(slash + 1);
  if (!flags.timeout_given) {
    flags.limits.timeout_seconds = flags.seconds + kAnswerMarginSeconds;
  } else if (flags.limits.timeout_seconds <= flags.seconds) {
    return Fail("--timeout " + NumberText(flags.limits.timeout_seconds) +
                    " must be longer than --seconds " +
                    NumberText(flags.seconds) +
                    ": the agent answers once the profile ends",
                2);
  }
  cli::HttpTarget target;
  if (!flags.kube.kubeconfig.empty()) {
    if (int rc = KubeAgentTarget(flags, pod_namespace, pod_name, &target);
        rc != 0)
      return rc;
  } else {
    if (Status s = cli::AgentUrlTarget(flags.agent, flags.client, flags.limits,
                                       &target);
        !s.ok()) {
      return Fail(s.message(), 2);
    }
  }
  std::multimap<std::string, std::string> query{
      {"namespace", pod_namespace},
      {"pod", pod_name},
      {"seconds", std::to_string(flags.seconds)},
      {"type", flags.type},
      {"format", flags.format}};
  if (flags.hz > 0) query.emplace("hz", std::to_string(flags.hz));
  cli::HttpAnswer answer;
  if (Status s =
          cli::FetchWithinLimits(target, "/api/v1/profile", query, &answer);
      !s.ok()) {
    return Fail(s.message());
  }
  if (answer.status != 200) {
    const std::string why = cli::ServerText(answer.body);
    const std::string message = "the agent answered HTTP " +
                                std::to_string(answer.status) + ": " +
                                (why.empty() ? "(no body)" : why);
    return Fail(flags.kube.kubeconfig.empty()
                    ? message
                    : cli::ExplainProxyError(message));
  }
  if (flags.output == "-") {
    std::cout << answer.body << std::flush;
    return std::cout ? 0 : Fail("writing to stdout failed");
  }
  std::ofstream out(flags.output, std::ios::binary);
  out << answer.body;
  out.close();
  if (!out) return Fail("cannot write " + flags.output);
  std::cerr << "trainscope profile: wrote " << answer.body.size() << " bytes ("
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
  auto* agent =
      app.add_option("--agent", flags.agent,
                     "The agent on the pod's node, e.g. http://node-a:9476");
  auto* kubeconfig = cli::AddKubeProxyFlags(app, &flags.kube);
  // One of the two: the agent by URL, or found on the pod's node.
  agent->excludes(kubeconfig);
  app.add_option("--pod", flags.pod,
                 "NAMESPACE/POD, or the UID of a pod found by --discovery "
                 "cgroup (no namespace)")
      ->required();
  app.add_option("--seconds", flags.seconds,
                 "How long to profile (the agent caps it: "
                 "--profile-max-seconds, 60 by default)")
      ->check(NumberIn(0, kMaxProfileSeconds))
      ->capture_default_str();
  app.add_option("--type", flags.type, "cpu or offcpu")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "offcpu"}));
  app.add_option("--hz", flags.hz,
                 "CPU samples per second per CPU (default: the agent's, 99)")
      ->check(WholeNumberIn(1, kMaxHz));
  app.add_option("--format", flags.format, "pprof, folded or svg")
      ->capture_default_str()
      ->check(CLI::IsMember({"pprof", "folded", "svg"}));
  app.add_option("--output,-o", flags.output, "File to write ('-': stdout)")
      ->capture_default_str();
  app.add_option("--bearer-token-file", flags.client.bearer_token_file,
                 "Send 'Authorization: Bearer <file content>'")
      ->excludes(kubeconfig);
  app.add_option("--ca-file", flags.client.ca_file,
                 "CA bundle verifying an https agent")
      ->excludes(kubeconfig);
  app.add_option("--header", flags.client.headers,
                 "Extra request header 'Name: value' (repeatable)");
  auto* timeout = cli::AddHttpLimitFlags(
      app, &flags.limits, "--seconds + " + NumberText(kAnswerMarginSeconds));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message; any flag error is a usage error (2), as
    // for `trainscope report` (CLI11's own codes are 100 and up).
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (flags.agent.empty() && flags.kube.kubeconfig.empty()) {
    return Fail("give --agent URL or --kubeconfig FILE (see --help)", 2);
  }
  flags.timeout_given = timeout->count() > 0;
  return Run(std::move(flags));
}

}  // namespace trainscope
