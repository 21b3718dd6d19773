#include "diagnosis/engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

namespace trainscope::diagnosis {

Engine::Engine(EngineSettings settings) : settings_(settings) {}

std::vector<Transition> Engine::Update(
    const std::vector<Finding>& findings,
    std::chrono::system_clock::time_point now) {
  std::vector<Transition> transitions;
  std::set<std::string> seen;
  for (const auto& f : findings) {
    const std::string key = DiagnosisKey(f.diagnosis);
    // Two findings for one key in one window (should not happen): the
    // first wins, so one window never counts twice.
    if (!seen.insert(key).second) continue;
    State& st = states_[key];
    const auto since = st.latest.since;
    const Severity held = st.latest.severity;
    st.latest = f.diagnosis;
    st.latest.since = since;
    st.exit_streak = 0;
    if (st.active) {
      st.latest.severity = HeldSeverity(st, held, f.diagnosis.severity);
      continue;
    }
    const bool event = f.level == Finding::Level::kEvent;
    if (f.level == Finding::Level::kEnter || event) {
      if (st.enter_streak++ == 0) {
        st.streak_start = now;
        st.streak_severity = f.diagnosis.severity;
      }
      st.streak_severity = std::min(st.streak_severity, f.diagnosis.severity);
    } else {
      st.enter_streak = 0;
    }
    if (st.enter_streak >= (event ? 1 : settings_.enter_windows)) {
      st.active = true;
      // `since` is when the condition started to hold, not when the
      // hysteresis let it through; the severity is the one it held all
      // along.
      st.latest.since = st.streak_start;
      st.latest.severity = st.streak_severity;
      spdlog::warn("[diagnosis] {} entered ({}) for {}/{}: {}", st.latest.kind,
                   SeverityName(st.latest.severity), st.latest.namespace_name,
                   st.latest.pod, st.latest.summary);
      transitions.push_back({Transition::Type::kEntered, st.latest});
    }
  }
  for (auto it = states_.begin(); it != states_.end();) {
    State& st = it->second;
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    st.enter_streak = 0;
    if (!st.active) {
      it = states_.erase(it);
      continue;
    }
    if (++st.exit_streak >= settings_.exit_windows) {
      spdlog::info("[diagnosis] {} cleared for {}/{} (active since {}s ago)",
                   st.latest.kind, st.latest.namespace_name, st.latest.pod,
                   std::chrono::duration_cast<std::chrono::seconds>(
                       now - st.latest.since)
                       .count());
      transitions.push_back({Transition::Type::kCleared, st.latest});
      it = states_.erase(it);
      continue;
    }
    ++it;
  }
  return transitions;
}

// While active the severity may rise, never fall: a cost that hovers at a
// threshold must not flip the series' severity label (and reset every
// alert's `for` timer); it falls when the diagnosis clears. It rises only
// after `enter_windows` consecutive windows above it, like a diagnosis
// enters, so one noisy window cannot label it for the rest of its life.
Severity Engine::HeldSeverity(State& st, Severity held, Severity now) const {
  if (now <= held) {
    st.rise_streak = 0;
    return held;
  }
  st.rise_severity =
      st.rise_streak++ == 0 ? now : std::min(st.rise_severity, now);
  if (st.rise_streak < settings_.enter_windows) return held;
  st.rise_streak = 0;
  return st.rise_severity;
}

std::vector<Diagnosis> Engine::Active() const {
  std::vector<Diagnosis> out;
  for (const auto& [key, st] : states_) {
    if (st.active) out.push_back(st.latest);
  }
  SortByExpectedGain(out);
  return out;
}

}  // namespace trainscope::diagnosis
