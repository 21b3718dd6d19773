#include "diagnosis/diagnosis.h"

#include <algorithm>

#include "trainscope/time_format.h"

namespace trainscope::diagnosis {

std::string DiagnosisKey(const Diagnosis& d) {
  // A node-level diagnosis has no pod: its node tells it apart.
  if (d.pod.empty()) return d.kind + "|" + d.namespace_name + "||" + d.node;
  return d.kind + "|" + d.namespace_name + "|" + d.pod;
}

void SortByExpectedGain(std::vector<Diagnosis>& ds) {
  // A stalled job loses all its time, which no expected speed-up of a
  // running job outranks: stalls lead, a whole job (critical) before one
  // stopped worker of an asynchronous job (warning).
  auto stalled = [](const Diagnosis& d) { return d.kind == kTrainingStalled; };
  auto gain = [](const Diagnosis& d) {
    const auto it = d.evidence.find("expected_speedup");
    return it != d.evidence.end() && it->is_number() ? it->get<double>() : 1.0;
  };
  std::stable_sort(ds.begin(), ds.end(), [&](const auto& a, const auto& b) {
    if (stalled(a) != stalled(b)) return stalled(a);
    if (stalled(a) && a.severity != b.severity) {
      return a.severity > b.severity;
    }
    if (gain(a) != gain(b)) return gain(a) > gain(b);
    if (a.severity != b.severity) return a.severity > b.severity;
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.namespace_name != b.namespace_name) {
      return a.namespace_name < b.namespace_name;
    }
    if (a.pod != b.pod) return a.pod < b.pod;
    return a.node < b.node;
  });
}

nlohmann::json DiagnosisJson(const Diagnosis& d) {
  return {{"kind", d.kind},
          {"severity", std::string(SeverityName(d.severity))},
          {"namespace", d.namespace_name},
          {"training_job", d.training_job},
          {"pod", d.pod},
          {"node", d.node},
          {"since", Rfc3339(d.since)},
          {"summary", d.summary},
          {"evidence", d.evidence},
          {"recommendations", d.recommendations}};
}

}  // namespace trainscope::diagnosis
