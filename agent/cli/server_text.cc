#include "cli/server_text.h"

#include <limits>

#include "trainscope/terminal_text.h"

namespace trainscope::cli {

std::string ServerText(std::string_view raw, size_t max_bytes) {
  return TerminalSafe(raw, max_bytes);
}

nlohmann::json ServerTextJson(const nlohmann::json& value) {
  constexpr size_t kNoCap = std::numeric_limits<size_t>::max() / 2;
  if (value.is_string()) {
    return ServerText(value.get_ref<const std::string&>(), kNoCap);
  }
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : value) out.push_back(ServerTextJson(item));
    return out;
  }
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, item] : value.items()) {
      out[ServerText(key, kNoCap)] = ServerTextJson(item);
    }
    return out;
  }
  return value;
}

}  // namespace trainscope::cli
