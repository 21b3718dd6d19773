#include "diagnosis/diagnosis.h"

#include "trainscope/time_format.h"

namespace trainscope::diagnosis {
bool JudgesWholeJob(std::string_view kind) {
  return kind == kHotParameterServer || kind == kStragglerWorker ||
         kind == kInputIoBound || kind == kAllreduceStraggler ||
         kind == kAllreduceSlowLink;
}

std::string DiagnosisKey(const Diagnosis& d) {
  // A node-level diagnosis has no pod: its node tells it apart.
  if (d.pod.empty()) return d.kind + "|" + d.namespace_name + "||" + d.node;
  return d.kind + "|" + d.namespace_name + "|" + d.pod;
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
