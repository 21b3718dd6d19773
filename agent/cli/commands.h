#pragma once

namespace trainscope {

// Each returns the process exit code. argv[0] is "trainscope <command>".
int RunReportCommand(int argc, char** argv);   // agent/cli/report_command.cc
int RunFlowsCommand(int argc, char** argv);    // agent/cli/flows_command.cc
int RunProfileCommand(int argc, char** argv);  // agent/cli/profile_command.cc

}  // namespace trainscope
