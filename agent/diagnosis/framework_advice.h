#pragma once

#include <string>
#include <vector>

#include "diagnosis/window.h"

namespace trainscope::diagnosis {

// The framework of a job: the first known one among its pods in the window.
Framework JobFramework(const WindowStats& stats,
                       const std::string& namespace_name,
                       const std::string& training_job);

// How to spread a hot PS's variables over all n PS, naming only APIs of the
// job's framework generation: TF 1 (tf.compat.v1 partitioners,
// tf.contrib GreedyLoadBalancingStrategy), TF 2 (ParameterServerStrategy
// variable_partitioner with tf.distribute.experimental.partitioners.*),
// MXNet (kvstore big-array splitting); both TF generations, each labelled,
// when the generation is unknown.
std::vector<std::string> PartitionRecommendations(const std::string& pod,
                                                  size_t n,
                                                  Framework framework);

}  // namespace trainscope::diagnosis
