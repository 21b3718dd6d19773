#include "prometheus_runner.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "node.h"

namespace trainsim {
namespace fs = std::filesystem;

std::string PrometheusRunner::Binary() {
  const char* env = std::getenv("TRAINSIM_PROMETHEUS");
  return env && *env ? env : "/usr/bin/prometheus";
}

std::string PrometheusRunner::Config(const std::vector<Target>& targets,
                                     double interval_s) {
  // Prometheus durations take integers with units; milliseconds keep
  // sub-second intervals exact.
  const long ms = std::max(100L, static_cast<long>(interval_s * 1000));
  const std::string every = std::to_string(ms) + "ms";
  const std::string timeout = std::to_string(std::min(ms, 10000L)) + "ms";
  std::ostringstream c;
  c << "global:\n"
    << "  scrape_interval: " << every << "\n"
    << "  scrape_timeout: " << timeout << "\n"
    << "  evaluation_interval: " << every << "\n"
    << "scrape_configs:\n"
    // The target labels the shipped ServiceMonitor leaves (daemonset/base/
    // servicemonitor.yaml, checked against the Operator's generated config
    // by tests/deploy/e2e_operator.sh): job from the Service, honor_labels,
    // instance = the node's name, service and endpoint; the agent pod's
    // namespace/pod/container are dropped there, so they are not set here.
    << "  - job_name: trainscope-agent\n"
    << "    honor_labels: true\n"
    << "    static_configs:\n";
  for (const Target& t : targets) {
    c << "      - targets: ['127.0.0.1:" << t.port << "']\n"
      << "        labels:\n"
      << "          instance: " << t.node << "\n"
      << "          service: trainscope-agent\n"
      << "          endpoint: metrics\n";
  }
  return c.str();
}

PrometheusRunner::PrometheusRunner(std::string dir, std::vector<Target> targets,
                                   double interval_s)
    : dir_(std::move(dir)),
      targets_(std::move(targets)),
      interval_s_(interval_s) {}

PrometheusRunner::~PrometheusRunner() { Stop(); }

std::string PrometheusRunner::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

void PrometheusRunner::Start(int port) {
  port_ = port;
  fs::create_directories(dir_ + "/data");
  {
    std::ofstream out(dir_ + "/prometheus.yml");
    out << Config(targets_, interval_s_);
    if (!out)
      throw std::runtime_error("cannot write " + dir_ + "/prometheus.yml");
  }
  const std::string bin = Binary();
  if (!fs::exists(bin))
    throw std::runtime_error(
        "Prometheus not found at " + bin +
        " (scripts/install-deps.sh installs Debian's prometheus; "
        "TRAINSIM_PROMETHEUS points elsewhere)");
  process_ = Subprocess::Spawn(
      {bin, "--config.file=" + dir_ + "/prometheus.yml",
       "--storage.tsdb.path=" + dir_ + "/data",
       "--storage.tsdb.retention.time=1h",
       "--web.listen-address=127.0.0.1:" + std::to_string(port_),
       "--log.level=warn"},
      log_path());
  { std::ofstream(dir_ + "/prometheus.pid") << process_.pid() << "\n"; }
  httplib::Client cli("127.0.0.1", port_);
  cli.set_connection_timeout(1);
  cli.set_read_timeout(2);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_.Running())
      throw std::runtime_error("Prometheus exited at start; its log:\n" +
                               LogTail(log_path(), 20));
    auto r = cli.Get("/-/ready");
    if (r && r->status == 200) {
      spdlog::info("[trainsim] Prometheus at {} scrapes {} agents every {} s",
                   url(), targets_.size(), interval_s_);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  throw std::runtime_error("Prometheus not ready within 60 s; its log:\n" +
                           LogTail(log_path(), 20));
}

void PrometheusRunner::Stop() {
  if (process_.pid() > 0) process_.Stop(std::chrono::seconds(5));
  std::error_code ec;
  fs::remove_all(dir_ + "/data", ec);
  fs::remove(dir_ + "/prometheus.pid", ec);
}

}  // namespace trainsim
