#pragma once

#include "node/node_collector.h"
#include "trainscope/collector_flags.h"

namespace trainscope {

// --node-interfaces and --node-link-mbit: the node's uplink.
class NodeFlags final : public CollectorFlags {
 public:
  explicit NodeFlags(NodeOptions* options) : options_(options) {}
  void Add(CLI::App& app) override;
  std::string Finish() override;

 private:
  NodeOptions* options_;
  std::string interfaces_;
  double link_mbit_ = 0;
};

}  // namespace trainscope
