// trainscope: the command-line companion of the agent.
//   trainscope report --agent URL | --prometheus URL [--namespace NS]
//                     [--job NAME] [--json]
//   trainscope flows --read FILE.pcap [--json]
//   trainscope profile --agent URL --pod NS/POD [--seconds S] [--type T]
//                      [--format pprof|folded|svg] [--output FILE]
#include <cstring>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  const char* usage =
      "usage: trainscope report --agent URL | --prometheus URL [--namespace "
      "NS] [--job NAME] [--json]\n"
      "       trainscope flows --read FILE.pcap [--json]\n"
      "       trainscope profile --agent URL --pod NS/POD [--seconds S] "
      "[--type cpu|offcpu] [--format pprof|folded|svg] [--output FILE]\n"
      "Run 'trainscope COMMAND --help' for the flags of a command.\n";
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 ||
      std::strcmp(argv[1], "-h") == 0) {
    std::cout << usage;
    return argc < 2 ? 2 : 0;
  }
  // Each command parses its own flags; argv[0] becomes "trainscope CMD".
  std::string name = std::string("trainscope ") + argv[1];
  argv[1] = name.data();
  if (std::strcmp(argv[1] + 11, "report") == 0) {
    return trainscope::RunReportCommand(argc - 1, argv + 1);
  }
  if (std::strcmp(argv[1] + 11, "flows") == 0) {
    return trainscope::RunFlowsCommand(argc - 1, argv + 1);
  }
  if (std::strcmp(argv[1] + 11, "profile") == 0) {
    return trainscope::RunProfileCommand(argc - 1, argv + 1);
  }
  std::cerr << "trainscope: unknown command '" << (argv[1] + 11) << "'\n"
            << usage;
  return 2;
}
