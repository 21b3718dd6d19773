#include "diagnosis/framework_advice.h"

#include <fmt/format.h>

namespace trainscope::diagnosis {
namespace {

std::string Tf1Partition(const std::string& pod, size_t n) {
  return fmt::format(
      "TF 1.x: partition the large variable(s) held by {0} across all {1} "
      "PS: tf.compat.v1.variable_scope(partitioner=tf.compat.v1."
      "fixed_size_partitioner(num_shards={1})) or tf.compat.v1."
      "min_max_variable_partitioner(max_partitions={1}, min_slice_size=256 "
      "<< 10).",
      pod, n);
}

std::string Tf1Greedy(size_t n) {
  return fmt::format(
      "TF 1.x, many mid-size variables rather than one large one: place them "
      "by size with tf.compat.v1.train.replica_device_setter(ps_tasks={0}, "
      "ps_strategy=tf.contrib.training.GreedyLoadBalancingStrategy({0}, "
      "tf.contrib.training.byte_size_load_fn)) (tf.contrib exists only in "
      "TF 1).",
      n);
}

std::string Tf2Partition(const std::string& pod, size_t n) {
  return fmt::format(
      "TF 2.x: partition the large variable(s) held by {0} across all {1} "
      "PS: tf.distribute.experimental.ParameterServerStrategy("
      "cluster_resolver, variable_partitioner=tf.distribute.experimental."
      "partitioners.MinSizePartitioner(min_shard_bytes=256 << 10, "
      "max_shards={1})), or FixedShardsPartitioner(num_shards={1}).",
      pod, n);
}

std::string Tf2MidSize() {
  return "TF 2.x, many mid-size variables: ParameterServerStrategy places "
         "whole variables round-robin and has no load-balancing strategy; a "
         "smaller MinSizePartitioner min_shard_bytes shards the mid-size "
         "variables too, so every PS gets a slice of each.";
}

}  // namespace

Framework JobFramework(const WindowStats& stats,
                       const std::string& namespace_name,
                       const std::string& training_job) {
  Framework found = Framework::kUnknown;
  for (const auto& [_, pod] : stats.pods) {
    const auto& m = pod.meta;
    if (m.namespace_name != namespace_name || m.training_job != training_job) {
      continue;
    }
    // A known generation beats "TensorFlow, generation unknown".
    if (found == Framework::kUnknown ||
        (found == Framework::kTensorFlow && IsTensorFlow(m.framework))) {
      found = m.framework;
    }
  }
  return found;
}

std::vector<std::string> PartitionRecommendations(const std::string& pod,
                                                  size_t n,
                                                  Framework framework) {
  std::vector<std::string> out;
  switch (framework) {
    case Framework::kTensorFlow1:
      out = {Tf1Partition(pod, n), Tf1Greedy(n)};
      break;
    case Framework::kTensorFlow2:
      out = {Tf2Partition(pod, n), Tf2MidSize()};
      break;
    case Framework::kMXNet:
      out = {fmt::format(
          "MXNet: the kvstore splits an array over all {} servers only when "
          "it is larger than MXNET_KVSTORE_BIGARRAY_BOUND elements (default "
          "1000000): lower it in every pod's environment so the large "
          "parameter held by {} is sliced over all servers.",
          n, pod)};
      break;
    default:
      // Generation unknown: both, each labelled, never one as the other.
      out = {Tf2Partition(pod, n), Tf1Partition(pod, n), Tf1Greedy(n)};
      break;
  }
  out.push_back(
      "Moving PS or worker pods between nodes (affinity, isolation) will not "
      "help: the imbalance comes from which variables each PS holds, not "
      "from where the pods run; adding PS does not help either until the "
      "variable is partitioned.");
  return out;
}

}  // namespace trainscope::diagnosis
