// What a person (or a DaemonSet template) controls before the agent starts:
// the command line, parsed and checked by the agent's own flag table
// (ParseAgentConfig: CLI11, every range check, every list and path step),
// and the YAML of --web-config-file (ParseWebConfig). Neither may crash,
// hang or read without bound, whatever the bytes; every refusal is a
// message, never an exception.
//
// Input: the first byte picks how many lines are arguments (the rest of the
// lines, joined, is a web config); each argument line is one argv entry.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "config.h"
#include "fuzz_input.h"
#include "http/web_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // --help and errors print; the fuzzer's output is not the place.
  static FILE* const quiet_out = std::freopen("/dev/null", "w", stdout);
  (void)quiet_out;
  trainscope::fuzz::FuzzInput input(data, size);
  const size_t arg_count = input.Byte() % 12;
  std::vector<std::string> args = {"trainscope-agent"};
  for (size_t i = 0; i < arg_count && !input.empty(); ++i) {
    args.emplace_back(input.Line());
  }
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  (void)trainscope::ParseAgentConfig(static_cast<int>(argv.size()),
                                     argv.data());

  trainscope::WebConfig web;
  (void)trainscope::ParseWebConfig(std::string(input.Rest()), "/nonexistent",
                                   &web);
  return 0;
}
