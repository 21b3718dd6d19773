#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainscope::testing {

// Kubernetes label selectors as the API server reads them: comma-separated
// requirements, all of which must hold. Equality-based: "key", "!key",
// "key=value" (or "=="), "key!=value"; set-based: "key in (a,b)",
// "key notin (a)".
struct LabelTerm {
  enum class Op { kExists, kNotExists, kEquals, kNotEquals, kIn, kNotIn };
  std::string key;
  Op op = Op::kExists;
  std::string value;                // kEquals, kNotEquals
  std::vector<std::string> values;  // kIn, kNotIn
};
// false for a malformed selector (empty requirement, empty key, unbalanced
// parentheses, an empty set).
bool ParseLabelSelector(const std::string& selector,
                        std::vector<LabelTerm>* out);
// Whether a pod's labels object satisfies every term. As in Kubernetes,
// "!=" and "notin" also hold when the label is absent.
bool LabelsMatch(const std::vector<LabelTerm>& terms,
                 const nlohmann::json& labels);

// Field selectors on pods: "<field>=<value>", "==", "!=", comma = AND, for
// the fields the fake knows: spec.nodeName, metadata.name,
// metadata.namespace.
struct FieldTerm {
  std::string field;
  bool equals = true;
  std::string value;
};
// false for a malformed selector or an unsupported field.
bool ParseFieldSelector(const std::string& selector,
                        std::vector<FieldTerm>* out);
bool FieldsMatch(const std::vector<FieldTerm>& terms,
                 const nlohmann::json& pod);

}  // namespace trainscope::testing
