#pragma once

#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace trainscope {

// A collector's command-line options, declared in the collector's folder
// and registered with it (agent/collector_registry.cc): adding a collector
// with flags stays one folder and one registry line.
class CollectorFlags {
 public:
  virtual ~CollectorFlags() = default;
  // Declares the flags on the agent's command line, each with its
  // TRAINSCOPE_<NAME> variable, help text and default.
  virtual void Add(CLI::App& app) = 0;
  // After CLI11 has read them and the agent's own flags are settled (node
  // name, host paths): checks and converts what came as text into the
  // collector's options; "" or the message, which names the flag.
  virtual std::string Finish() = 0;
};

using CollectorFlagsPtr = std::unique_ptr<CollectorFlags>;

}  // namespace trainscope
