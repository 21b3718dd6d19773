#include "diagnosis/diagnosis.h"

#include <ctime>

namespace trainscope::diagnosis {
namespace {

std::string Rfc3339Utc(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string DiagnosisKey(const Diagnosis& d) {
  return d.kind + "|" + d.namespace_name + "|" + d.pod;
}

nlohmann::json DiagnosisJson(const Diagnosis& d) {
  return {{"kind", d.kind},
          {"severity", std::string(SeverityName(d.severity))},
          {"namespace", d.namespace_name},
          {"training_job", d.training_job},
          {"pod", d.pod},
          {"since", Rfc3339Utc(d.since)},
          {"summary", d.summary},
          {"evidence", d.evidence},
          {"recommendations", d.recommendations}};
}

}  // namespace trainscope::diagnosis
