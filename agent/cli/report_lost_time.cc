#include "cli/report_lost_time.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <utility>

#include "cli/server_text.h"
#include "trainscope/metric_names.h"

namespace trainscope::cli {
namespace {

constexpr const char* kLostQuery = "job_lost";
constexpr const char* kSecondsQuery = "job_seconds";

std::string Increase(std::string_view metric, const std::string& matchers,
                     double range_seconds, const std::string& by) {
  const auto range = static_cast<long long>(std::ceil(range_seconds));
  return "max by (namespace, training_job" + by + ") (increase(" +
         std::string(metric) + "{" + matchers + "}[" + std::to_string(range) +
         "s]))";
}

// A sample's value ("NaN" and junk read as absent).
bool SampleValue(const nlohmann::json& sample, double* value) {
  const auto v = sample.find("value");
  if (v == sample.end() || !v->is_array() || v->size() != 2 ||
      !(*v)[1].is_string())
    return false;
  const std::string& text = (*v)[1].get_ref<const std::string&>();
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return end != text.c_str() && std::isfinite(*value) && *value >= 0;
}

using JobKey = std::pair<std::string, std::string>;

Status ForEachSample(const std::map<std::string, nlohmann::json>& answers,
                     const char* name,
                     const std::function<void(const nlohmann::json& metric,
                                              double value)>& add) {
  const auto it = answers.find(name);
  if (it == answers.end()) return Status::Ok();  // no such series yet
  if (!it->second.is_array())
    return Status::Error(std::string("lost time: ") + name +
                         " is not a vector");
  for (const auto& sample : it->second) {
    const auto metric = sample.find("metric");
    double value = 0;
    if (!sample.is_object() || metric == sample.end() || !metric->is_object() ||
        !SampleValue(sample, &value))
      return Status::Error(
          std::string("lost time: ") + name +
          " has a malformed sample: " + ServerText(sample.dump(), 200));
    add(*metric, value);
  }
  return Status::Ok();
}

}  // namespace

double JobLostTime::GoodputRatio() const {
  if (seconds <= 0) return 1;
  double lost = 0;
  for (const auto& [cause, s] : lost_seconds) lost += s;
  return std::clamp(1 - lost / seconds, 0.0, 1.0);
}

double LostTime::TotalSeconds() const {
  double sum = 0;
  for (const auto& [cause, s] : ByCause()) sum += s;
  return sum;
}

std::map<std::string, double> LostTime::ByCause() const {
  std::map<std::string, double> out;
  for (const auto& job : jobs)
    for (const auto& [cause, s] : job.lost_seconds) out[cause] += s;
  return out;
}

std::vector<PromQuery> LostTimeQueries(const std::string& matchers,
                                       double range_seconds) {
  return {{kLostQuery,
           Increase(kJobLostSecondsTotal, matchers, range_seconds, ", cause")},
          // max per state, then summed over states by the reader
          {kSecondsQuery,
           Increase(kJobSecondsTotal, matchers, range_seconds, ", state")}};
}

Status LostTimeFromAnswers(const std::map<std::string, nlohmann::json>& answers,
                           LostTime* out) {
  std::map<JobKey, JobLostTime> jobs;
  auto job_of = [&jobs](const nlohmann::json& metric) -> JobLostTime& {
    JobKey key{LabelOf(metric, "namespace"), LabelOf(metric, "training_job")};
    JobLostTime& job = jobs[key];
    job.namespace_name = key.first;
    job.training_job = key.second;
    return job;
  };
  if (Status s = ForEachSample(answers, kSecondsQuery,
                               [&](const nlohmann::json& metric, double v) {
                                 job_of(metric).seconds += v;
                               });
      !s.ok())
    return s;
  if (Status s = ForEachSample(answers, kLostQuery,
                               [&](const nlohmann::json& metric, double v) {
                                 const std::string cause =
                                     LabelOf(metric, "cause");
                                 if (v > 0 && !cause.empty())
                                   job_of(metric).lost_seconds[cause] += v;
                               });
      !s.ok())
    return s;
  out->jobs.clear();
  for (auto& [key, job] : jobs) out->jobs.push_back(std::move(job));
  std::stable_sort(out->jobs.begin(), out->jobs.end(),
                   [](const JobLostTime& a, const JobLostTime& b) {
                     return a.GoodputRatio() < b.GoodputRatio();
                   });
  return Status::Ok();
}

Status QueryLostTime(const HttpTarget& target, const std::string& matchers,
                     double range_seconds, double end, LostTime* out) {
  std::map<std::string, nlohmann::json> answers;
  for (const PromQuery& q : LostTimeQueries(matchers, range_seconds)) {
    if (Status s = QueryPrometheus(
            target, "lost time: the server", "/api/v1/query",
            {{"query", q.promql}, {"time", std::to_string(end)}}, "vector",
            &answers[q.name]);
        !s.ok())
      return s;
  }
  return LostTimeFromAnswers(answers, out);
}

nlohmann::json LostTimeJson(const LostTime& lost) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& job : lost.jobs)
    jobs.push_back({{"namespace", job.namespace_name},
                    {"training_job", job.training_job},
                    {"goodput_ratio", job.GoodputRatio()},
                    {"lost_seconds", job.lost_seconds}});
  return {{"total_seconds", lost.TotalSeconds()},
          {"by_cause", lost.ByCause()},
          {"jobs", std::move(jobs)}};
}

}  // namespace trainscope::cli
