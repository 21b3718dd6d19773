#include "discovery/json_fields.h"

#include <limits>

namespace trainscope::json_fields {

using nlohmann::json;

std::string TypeError(const std::string& path, const char* want,
                      const json& got) {
  return path + ": expected " + want + ", got " + got.type_name();
}

std::string Join(const std::string& path, const char* key) {
  return path.empty() ? std::string(key) : path + "." + key;
}

bool OptString(const json& obj, const char* key, const std::string& path,
               std::string* out, std::string* error) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return true;
  if (!it->is_string()) {
    *error = TypeError(Join(path, key), "string", *it);
    return false;
  }
  *out = it->get<std::string>();
  return true;
}

bool OptInt(const json& obj, const char* key, const std::string& path, int* out,
            std::string* error) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return true;
  if (!it->is_number_integer()) {
    *error = TypeError(Join(path, key), "integer", *it);
    return false;
  }
  const auto value = it->get<int64_t>();
  if (value < std::numeric_limits<int>::min() ||
      value > std::numeric_limits<int>::max()) {
    *error = Join(path, key) + ": " + std::to_string(value) + " out of range";
    return false;
  }
  *out = static_cast<int>(value);
  return true;
}

bool OptObject(const json& obj, const char* key, const std::string& path,
               const json** out, std::string* error) {
  *out = nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return true;
  if (!it->is_object()) {
    *error = TypeError(Join(path, key), "object", *it);
    return false;
  }
  *out = &*it;
  return true;
}

bool OptArray(const json& obj, const char* key, const std::string& path,
              const json** out, std::string* error) {
  *out = nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return true;
  if (!it->is_array()) {
    *error = TypeError(Join(path, key), "array", *it);
    return false;
  }
  *out = &*it;
  return true;
}

bool StringMap(const json& obj, const char* key, const std::string& path,
               std::map<std::string, std::string>* out, std::string* error) {
  const json* map = nullptr;
  if (!OptObject(obj, key, path, &map, error)) return false;
  if (map == nullptr) return true;
  for (const auto& [k, v] : map->items()) {
    if (!v.is_string()) {
      *error = TypeError(Join(path, key) + "." + k, "string", v);
      return false;
    }
    (*out)[k] = v.get<std::string>();
  }
  return true;
}

}  // namespace trainscope::json_fields
