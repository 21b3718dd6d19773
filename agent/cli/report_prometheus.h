#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnosis/window.h"
#include "trainscope/pod.h"
#include "trainscope/status.h"

namespace trainscope::cli {

// One range query of the cluster view and where its values go.
struct PromQuery {
  std::string name;  // stable id used to route the result
  std::string promql;
};

// A PromQL string literal of `value` (JSON escaping is valid PromQL quoting).
std::string PromQLString(const std::string& value);
// The string value of a label in a series' `metric` object ("" if absent).
std::string LabelOf(const nlohmann::json& metric, const char* name);

// Label matchers for a namespace and/or a training job ("" = all), after
// `extra` (checked matchers from --selector); all empty gives "".
std::string FilterMatchers(const std::string& namespace_name,
                           const std::string& training_job,
                           const std::string& extra = "");

// The queries for the agents' series, filtered to a namespace and/or a
// training job when given ("" = all); `extra_matchers` (checked label
// matchers, comma-separated, from --selector) go into every query.
std::vector<PromQuery> ClusterQueries(const std::string& namespace_name,
                                      const std::string& training_job,
                                      const std::string& extra_matchers = "");
// The queries for the pod series matching any of the matcher lists (a
// batch, report_batches.h; {""} = every pod): one query per pod metric and
// matcher list, several answers for one name add up. Node series are never
// filtered by pod (every batch judges its pods' nodes whole): they take
// `node_matchers` (--selector) only.
std::vector<PromQuery> ClusterQueries(
    const std::vector<std::string>& matcher_sets,
    const std::string& node_matchers = "");

// Rebuilds the detector window one `data.result` matrix of
// /api/v1/query_range at a time (keyed by PromQuery::name), so each answer
// can be dropped once added: a large cluster's answers together are many
// times the window's size (docs/performance.md, "Cluster view at 500 nodes").
class WindowBuilder {
 public:
  WindowBuilder();
  ~WindowBuilder();
  WindowBuilder(const WindowBuilder&) = delete;
  WindowBuilder& operator=(const WindowBuilder&) = delete;

  // An unexpected shape is an error naming the query.
  Status Add(const std::string& name, const nlohmann::json& result);
  // The window of everything added; the builder starts empty again.
  diagnosis::Window Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Rebuilds the detector window from the `data.result` matrices of
// /api/v1/query_range, keyed by PromQuery::name. Pure: the tests feed it
// recorded answers. An unexpected shape is an error naming the query.
Status WindowFromMatrices(const std::map<std::string, nlohmann::json>& results,
                          diagnosis::Window* window);

// A node whose agent stopped reporting: its series end before the range
// does (Prometheus marks a dead target's series stale at once).
struct MissingNode {
  std::string node;
  double last_seen = 0;  // unix seconds of its last sample
};

// Nodes with agent series in the range whose newest sample is older than
// `end - grace_seconds`, from the "node_cpus" matrix (one series per agent).
std::vector<MissingNode> MissingNodes(const nlohmann::json& node_series,
                                      double end, double grace_seconds);

// The pods the window knows, as the report's job summary wants them.
PodList PodsOfWindow(const diagnosis::Window& window);

}  // namespace trainscope::cli
