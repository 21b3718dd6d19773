#include "trainscope/pod.h"

#include <algorithm>
#include <cctype>

namespace trainscope {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kPs:
      return "ps";
    case Role::kWorker:
      return "worker";
    case Role::kChief:
      return "chief";
    case Role::kMaster:
      return "master";
    case Role::kEvaluator:
      return "evaluator";
    case Role::kUnknown:
      break;
  }
  return "";
}

std::optional<Role> ParseRole(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (lower == "ps" || lower == "parameter_server" ||
      lower == "parameterserver") {
    return Role::kPs;
  }
  if (lower == "worker") return Role::kWorker;
  if (lower == "chief") return Role::kChief;
  if (lower == "master") return Role::kMaster;
  if (lower == "evaluator") return Role::kEvaluator;
  return std::nullopt;
}

std::vector<std::string_view> RoleLabelValues() {
  std::vector<std::string_view> out;
  for (Role r : {Role::kPs, Role::kWorker, Role::kChief, Role::kMaster,
                 Role::kEvaluator}) {
    out.push_back(RoleName(r));
  }
  std::sort(out.begin(), out.end());
  return out;
}

PodTable::PodTable() : pods_(std::make_shared<const PodList>()) {}

void PodTable::Replace(PodList pods) {
  auto fresh = std::make_shared<const PodList>(std::move(pods));
  std::lock_guard lock(mu_);
  pods_ = std::move(fresh);
  ++generation_;
}

std::shared_ptr<const PodList> PodTable::Get() const {
  std::lock_guard lock(mu_);
  return pods_;
}

uint64_t PodTable::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

}  // namespace trainscope
