#include <iostream>

#include "cli/commands.h"

namespace trainscope {

// Replaced by the diagnosis work (issue 5).
int RunReportCommand(int, char**) {
  std::cerr << "trainscope report: not available in this build yet\n";
  return 1;
}

}  // namespace trainscope
