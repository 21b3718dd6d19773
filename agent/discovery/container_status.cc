#include "discovery/container_status.h"

#include "discovery/json_fields.h"
#include "trainscope/time_format.h"

namespace trainscope {
namespace {

using json_fields::Join;
using json_fields::OptInt;
using json_fields::OptObject;
using json_fields::OptString;
using nlohmann::json;

// obj[key] as Unix seconds; absent, null or unreadable leaves it unknown.
bool OptTime(const json& obj, const char* key, const std::string& path,
             std::optional<double>* out, std::string* error) {
  std::string text;
  if (!OptString(obj, key, path, &text, error)) return false;
  if (!text.empty()) *out = ParseRfc3339(text);
  return true;
}

bool ParseTermination(const json& terminated, const std::string& path,
                      ContainerTermination* out, std::string* error) {
  return OptString(terminated, "reason", path, &out->reason, error) &&
         OptInt(terminated, "exitCode", path, &out->exit_code, error) &&
         OptInt(terminated, "signal", path, &out->signal, error) &&
         OptTime(terminated, "finishedAt", path, &out->finished_at_s, error);
}

}  // namespace

bool ParseContainerState(const json& status, const std::string& path,
                         ContainerInfo* out, std::string* error) {
  if (auto it = status.find("restartCount");
      it != status.end() && !it->is_null()) {
    int restarts = 0;
    if (!OptInt(status, "restartCount", path, &restarts, error)) return false;
    out->restart_count = restarts;
  }
  const json* state = nullptr;
  if (!OptObject(status, "state", path, &state, error)) return false;
  if (state != nullptr) {
    const std::string spath = Join(path, "state");
    const json* running = nullptr;
    const json* waiting = nullptr;
    if (!OptObject(*state, "running", spath, &running, error) ||
        !OptObject(*state, "waiting", spath, &waiting, error)) {
      return false;
    }
    if (running != nullptr &&
        !OptTime(*running, "startedAt", Join(spath, "running"),
                 &out->running_since_s, error)) {
      return false;
    }
    if (waiting != nullptr &&
        !OptString(*waiting, "reason", Join(spath, "waiting"),
                   &out->waiting_reason, error)) {
      return false;
    }
  }
  const json* last = nullptr;
  if (!OptObject(status, "lastState", path, &last, error)) return false;
  if (last == nullptr) return true;
  const std::string lpath = Join(path, "lastState");
  const json* terminated = nullptr;
  if (!OptObject(*last, "terminated", lpath, &terminated, error)) return false;
  if (terminated == nullptr) return true;
  ContainerTermination t;
  if (!ParseTermination(*terminated, Join(lpath, "terminated"), &t, error)) {
    return false;
  }
  out->last_terminated = std::move(t);
  return true;
}

}  // namespace trainscope
