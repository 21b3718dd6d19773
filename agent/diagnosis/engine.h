#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "diagnosis/diagnosis.h"
#include "diagnosis/settings.h"

namespace trainscope::diagnosis {

struct Transition {
  enum class Type { kEntered, kCleared };
  Type type;
  Diagnosis diagnosis;
};

// Turns per-window findings into stable diagnoses: a diagnosis enters after
// `enter_windows` consecutive windows at the enter level and clears after
// `exit_windows` consecutive windows without a finding (below the exit
// threshold). A value oscillating around either threshold therefore never
// toggles it. Not thread-safe; the owner serializes Update and Active.
class Engine {
 public:
  explicit Engine(EngineSettings settings = {});

  // One window's findings, evaluated at `now`. Logs a warning line per
  // entered diagnosis and an info line per cleared one. A diagnosis enters
  // with the least severity of its entering windows; an active one takes
  // each window's evidence, and its severity rises after `enter_windows`
  // consecutive windows above it but never falls until it clears (no
  // flapping severity label, no label from one noisy window).
  std::vector<Transition> Update(const std::vector<Finding>& findings,
                                 std::chrono::system_clock::time_point now);
  // Active diagnoses in the report order (SortByExpectedGain).
  std::vector<Diagnosis> Active() const;

 private:
  struct State {
    Diagnosis latest;
    int enter_streak = 0;
    int exit_streak = 0;
    bool active = false;
    std::chrono::system_clock::time_point streak_start{};
    // Least severity over the entering streak, and over the windows above
    // the held severity while active.
    Severity streak_severity = Severity::kInfo;
    int rise_streak = 0;
    Severity rise_severity = Severity::kInfo;
  };
  Severity HeldSeverity(State& st, Severity held, Severity now) const;

  EngineSettings settings_;
  std::map<std::string, State> states_;
};

}  // namespace trainscope::diagnosis
