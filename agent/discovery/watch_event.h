#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "trainscope/status.h"

namespace trainscope {

// One line of a Kubernetes watch stream:
// {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}.
struct WatchEvent {
  std::string type;
  nlohmann::json object;
  // For ERROR events: the Status object's code (410 = resource version too
  // old) and message.
  int error_code = 0;
  std::string error_message;
};

Status ParseWatchEvent(std::string_view line, WatchEvent* out);

// Cuts a byte stream into newline-terminated lines (chunks may split a line
// anywhere). Returns false as soon as on_line does.
class LineSplitter {
 public:
  // Guards against a server that never sends a newline.
  static constexpr size_t kMaxLine = 16 << 20;

  bool Feed(std::string_view data,
            const std::function<bool(std::string_view)>& on_line);
  bool overflowed() const { return overflowed_; }

 private:
  std::string pending_;
  bool overflowed_ = false;
};

}  // namespace trainscope
