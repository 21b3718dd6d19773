#pragma once

#include <string>
#include <vector>

#include "exec.h"

namespace trainsim {

// A real Prometheus (Debian's /usr/bin/prometheus) scraping every node's
// agent of a cluster run, with the target labels a ServiceMonitor target of
// the shipped DaemonSet ends up with (Operator relabelling, instance = node,
// the agent pod's namespace/pod/container dropped), and honor_labels: true
// so the agent's own namespace/pod labels are kept. It lives
// under the run dir (config, data, log); Stop() ends it and removes its
// data, and the supervisor's death takes it along (PR_SET_PDEATHSIG).
class PrometheusRunner {
 public:
  struct Target {
    std::string node;
    int port = 0;  // the agent's, on 127.0.0.1
  };

  // The scrape config as Prometheus reads it. Pure.
  static std::string Config(const std::vector<Target>& targets,
                            double interval_s);
  // Where the binary is: $TRAINSIM_PROMETHEUS or /usr/bin/prometheus.
  static std::string Binary();

  PrometheusRunner(std::string dir, std::vector<Target> targets,
                   double interval_s);
  ~PrometheusRunner();
  PrometheusRunner(const PrometheusRunner&) = delete;
  PrometheusRunner& operator=(const PrometheusRunner&) = delete;

  // Starts it on a free loopback port and waits (bounded) for /-/ready.
  // Throws with its log on failure.
  void Start(int port);
  void Stop();
  std::string url() const;
  bool Running() { return process_.Running(); }
  std::string log_path() const { return dir_ + "/prometheus.log"; }

 private:
  std::string dir_;
  std::vector<Target> targets_;
  double interval_s_;
  int port_ = 0;
  Subprocess process_;
};

}  // namespace trainsim
