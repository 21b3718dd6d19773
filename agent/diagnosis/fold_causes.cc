#include "diagnosis/fold_causes.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include "trainscope/time_format.h"

namespace trainscope::diagnosis {
namespace {

// The table of docs/diagnosis.md ("One problem, one diagnosis").
constexpr std::array<std::string_view, 2> kStragglers = {kStragglerWorker,
                                                         kAllreduceStraggler};
// Causes the straggler folds into, the first found wins (a restart
// explains a pod that exchanged less: it was down).
constexpr std::array<std::string_view, 4> kKeptCauses = {
    kPodRestarting, kInputIoBound, kMemoryPressure, kNetworkSaturated};
// Causes that fold into the straggler.
constexpr std::array<std::string_view, 1> kFoldedCauses = {kCpuThrottled};

template <size_t N>
bool OneOf(const std::array<std::string_view, N>& kinds,
           std::string_view kind) {
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

bool IsFinding(const Diagnosis& d) { return d.severity >= Severity::kWarning; }

double Speedup(const Diagnosis& d) {
  const auto it = d.evidence.find("expected_speedup");
  return it != d.evidence.end() && it->is_number() ? it->get<double>() : 1.0;
}

nlohmann::json Nested(const Diagnosis& d) {
  return {{"kind", d.kind},
          {"severity", std::string(SeverityName(d.severity))},
          {"since", Rfc3339(d.since)},
          {"summary", d.summary},
          {"evidence", d.evidence}};
}

// `folded` becomes part of `kept`: `link` names its kind (a scalar, so the
// text report shows it), `folded` holds it whole.
void Fold(Diagnosis& kept, const Diagnosis& folded, const char* link,
          const std::string& sentence) {
  kept.evidence[link] = folded.kind;
  auto& all = kept.evidence["folded"];
  if (!all.is_array()) all = nlohmann::json::array();
  all.push_back(Nested(folded));
  kept.severity = std::max(kept.severity, folded.severity);
  // The problem costs what the larger of its two readings says.
  if (Speedup(folded) > Speedup(kept)) {
    for (const char* key :
         {"cost_fraction", "expected_speedup", "cost_model"}) {
      if (auto it = folded.evidence.find(key); it != folded.evidence.end()) {
        kept.evidence[key] = *it;
      }
    }
    kept.evidence["cost_from"] = folded.kind;
  }
  kept.summary += " " + sentence;
  for (const auto& r : folded.recommendations) {
    if (std::find(kept.recommendations.begin(), kept.recommendations.end(),
                  r) == kept.recommendations.end()) {
      kept.recommendations.push_back(r);
    }
  }
}

// What a stopped job shows as side effects of the stop: a rank that spins
// at its limit is throttled and a straggler, a ring with a dead link is a
// slow link. Events (restarts, GPU errors) and memory pressure are causes
// or risks of their own and stay.
constexpr std::array<std::string_view, 9> kStallSymptoms = {
    kStragglerWorker,    kAllreduceStraggler, kAllreduceSlowLink,
    kHotParameterServer, kPsCpuSaturated,     kInputIoBound,
    kGpuUnderutilized,   kCpuThrottled,       kNetworkSaturated};

// Folds the symptoms of each training_stalled into it: of the whole job
// for a job's stall, of the one pod for a worker's.
void FoldIntoStalls(std::vector<Diagnosis>& active, std::vector<bool>& gone) {
  for (Diagnosis& stall : active) {
    if (stall.kind != kTrainingStalled || !IsFinding(stall)) continue;
    const bool whole_job = stall.severity == Severity::kCritical;
    for (size_t i = 0; i < active.size(); ++i) {
      const Diagnosis& d = active[i];
      if (gone[i] || !OneOf(kStallSymptoms, d.kind) || !IsFinding(d) ||
          d.namespace_name != stall.namespace_name ||
          d.training_job != stall.training_job || d.training_job.empty() ||
          (!whole_job && d.pod != stall.pod))
        continue;
      auto& all = stall.evidence["folded"];
      if (!all.is_array()) all = nlohmann::json::array();
      all.push_back(Nested(d));
      gone[i] = true;
    }
  }
}

}  // namespace

std::vector<Diagnosis> FoldSamePodCauses(std::vector<Diagnosis> active) {
  std::vector<bool> gone(active.size(), false);
  FoldIntoStalls(active, gone);
  std::vector<bool> took_straggler(active.size(), false);
  auto same_pod = [&](size_t a, size_t b) {
    return a != b && !gone[b] &&
           active[a].namespace_name == active[b].namespace_name &&
           active[a].pod == active[b].pod && IsFinding(active[b]);
  };
  for (size_t s = 0; s < active.size(); ++s) {
    Diagnosis& straggler = active[s];
    if (gone[s] || straggler.pod.empty() || !IsFinding(straggler) ||
        !OneOf(kStragglers, straggler.kind)) {
      continue;
    }
    // A cause that names the resource to fix keeps the entry.
    std::optional<size_t> keeper;
    for (std::string_view kind : kKeptCauses) {
      for (size_t c = 0; c < active.size() && !keeper; ++c) {
        if (active[c].kind == kind && !took_straggler[c] && same_pod(s, c)) {
          keeper = c;
        }
      }
    }
    if (keeper) {
      Fold(active[*keeper], straggler, "slows_job",
           "This makes " + straggler.pod + " a straggler (" + straggler.kind +
               "): " + straggler.summary);
      took_straggler[*keeper] = true;
      gone[s] = true;
      continue;
    }
    for (size_t c = 0; c < active.size(); ++c) {
      if (!OneOf(kFoldedCauses, active[c].kind) || !same_pod(s, c)) continue;
      Fold(straggler, active[c], "caused_by",
           "Caused by " + active[c].kind + ": " + active[c].summary);
      gone[c] = true;
    }
  }
  std::vector<Diagnosis> out;
  out.reserve(active.size());
  for (size_t i = 0; i < active.size(); ++i) {
    if (!gone[i]) out.push_back(std::move(active[i]));
  }
  SortByExpectedGain(out);
  return out;
}

}  // namespace trainscope::diagnosis
