// What `trainscope report --prometheus` reads from Prometheus: an object of
// query name -> `data.result` (matrices for the window, vectors for the
// roster and the triage), rebuilt into the detector window, then judged by
// the triage and evaluated by every detector, as the report does.

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/report_batches.h"
#include "cli/report_prometheus.h"
#include "cli/report_triage.h"
#include "diagnosis/analysis.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainscope;
  const auto doc = nlohmann::json::parse(data, data + size, nullptr,
                                         /*allow_exceptions=*/false);
  if (!doc.is_object()) return 0;
  std::map<std::string, nlohmann::json> answers;
  for (const auto& [name, answer] : doc.items()) answers[name] = answer;
  const diagnosis::DiagnosisSettings settings;

  std::vector<cli::PodRef> roster;
  if (auto it = answers.find("roster"); it != answers.end()) {
    (void)cli::PodRefsFromVector(it->second, &roster);
  }
  cli::Suspects suspects;
  if (cli::JudgeTriage(answers, roster, settings, &suspects).ok()) {
    (void)cli::PodsToReplay(roster, suspects);
  }
  if (auto it = answers.find("node_cpus"); it != answers.end()) {
    (void)cli::MissingNodes(it->second, /*end=*/1e9, /*grace_seconds=*/60);
  }
  diagnosis::Window window;
  if (!cli::WindowFromMatrices(answers, &window).ok()) return 0;
  (void)cli::PodsOfWindow(window);
  (void)diagnosis::Evaluate(window, settings);
  return 0;
}
