#include <algorithm>
#include <map>

#include "profiler/outputs.h"

namespace trainscope::profiler {
namespace {

// ';' separates frames and '\n' lines in the folded format.
std::string Clean(std::string s) {
  std::replace(s.begin(), s.end(), ';', ':');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

std::string Label(const ProfileSample& s, const std::string& key) {
  auto it = s.labels.find(key);
  return it == s.labels.end() ? std::string() : it->second;
}

}  // namespace

std::string FoldedStacks(const Profile& profile) {
  std::map<std::string, int64_t> stacks;
  for (const ProfileSample& s : profile.samples) {
    std::string line = "[thread " + Clean(Label(s, "thread")) + "]";
    if (std::string state = Label(s, "state"); !state.empty()) {
      line += ";[" + state + "]";
    }
    for (auto f = s.frames.rbegin(); f != s.frames.rend(); ++f) {
      line += ";" + Clean(f->function);
    }
    stacks[line] += s.value;
  }
  std::string out;
  for (const auto& [stack, value] : stacks) {
    out += stack + " " + std::to_string(value) + "\n";
  }
  return out;
}

}  // namespace trainscope::profiler
