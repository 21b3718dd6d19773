#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace trainscope::json_fields {

// Readers of optional members of API objects. Each returns false (and fills
// *error with the member's path and the type it wanted) only when the
// member is present with the wrong type; absent or null members leave *out
// as it was, so optional fields stay optional.

std::string TypeError(const std::string& path, const char* want,
                      const nlohmann::json& got);
// "status" + "phase" -> "status.phase".
std::string Join(const std::string& path, const char* key);

bool OptString(const nlohmann::json& obj, const char* key,
               const std::string& path, std::string* out, std::string* error);
// A JSON integer that fits an int (exit codes, restart counts).
bool OptInt(const nlohmann::json& obj, const char* key, const std::string& path,
            int* out, std::string* error);
// An optional object member: nullptr when absent or null.
bool OptObject(const nlohmann::json& obj, const char* key,
               const std::string& path, const nlohmann::json** out,
               std::string* error);
bool OptArray(const nlohmann::json& obj, const char* key,
              const std::string& path, const nlohmann::json** out,
              std::string* error);
bool StringMap(const nlohmann::json& obj, const char* key,
               const std::string& path, std::map<std::string, std::string>* out,
               std::string* error);

}  // namespace trainscope::json_fields
