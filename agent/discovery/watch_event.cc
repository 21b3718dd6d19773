#include "discovery/watch_event.h"

namespace trainscope {

Status ParseWatchEvent(std::string_view line, WatchEvent* out) {
  nlohmann::json event;
  try {
    event = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    // Not only parse_error: a number beyond double's range is out_of_range
    // (406), which escaped the watch thread and ended the agent (found by
    // fuzz.watch_event).
    return Status::Error(std::string("watch event: malformed JSON: ") +
                         e.what());
  }
  if (!event.is_object()) return Status::Error("watch event: not an object");
  auto type = event.find("type");
  if (type == event.end() || !type->is_string()) {
    return Status::Error("watch event: missing string field \"type\"");
  }
  auto object = event.find("object");
  if (object == event.end() || !object->is_object()) {
    return Status::Error("watch event " + type->get<std::string>() +
                         ": missing object field \"object\"");
  }
  WatchEvent e;
  e.type = type->get<std::string>();
  e.object = std::move(*object);
  if (e.type == "ERROR") {
    if (auto code = e.object.find("code");
        code != e.object.end() && code->is_number_integer()) {
      e.error_code = code->get<int>();
    }
    if (auto msg = e.object.find("message");
        msg != e.object.end() && msg->is_string()) {
      e.error_message = msg->get<std::string>();
    }
  } else if (e.type != "ADDED" && e.type != "MODIFIED" && e.type != "DELETED" &&
             e.type != "BOOKMARK") {
    return Status::Error("watch event: unknown type \"" + e.type + "\"");
  }
  *out = std::move(e);
  return Status::Ok();
}

bool LineSplitter::Feed(std::string_view data,
                        const std::function<bool(std::string_view)>& on_line) {
  pending_.append(data);
  size_t start = 0;
  while (true) {
    const size_t nl = pending_.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view line(pending_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = nl + 1;
    if (line.empty()) continue;
    if (!on_line(line)) {
      pending_.erase(0, start);
      return false;
    }
  }
  pending_.erase(0, start);
  if (pending_.size() > kMaxLine) {
    overflowed_ = true;
    return false;
  }
  return true;
}

}  // namespace trainscope
