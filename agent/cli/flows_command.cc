#include <iostream>

#include "cli/commands.h"

namespace trainscope {

// Replaced by the flows work (issue 4).
int RunFlowsCommand(int, char**) {
  std::cerr << "trainscope flows: not available in this build yet\n";
  return 1;
}

}  // namespace trainscope
