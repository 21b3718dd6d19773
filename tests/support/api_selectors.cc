#include "api_selectors.h"

#include <algorithm>

namespace trainscope::testing {
namespace {

using nlohmann::json;

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// Splits at commas outside parentheses; false when they do not balance.
bool SplitTop(const std::string& s, std::vector<std::string>* out) {
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) return false;
    if (c == ',' && depth == 0) {
      out->push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out->push_back(cur);
  return depth == 0;
}

// "key in (a,b)" / "key notin (a)"; nullopt-like false when not set-based.
bool ParseSetTerm(const std::string& item, LabelTerm* term, bool* ok) {
  const size_t open = item.find('(');
  if (open == std::string::npos) return false;
  *ok = false;
  if (item.back() != ')') return true;
  const std::string head = Trim(item.substr(0, open));
  const size_t space = head.rfind(' ');
  if (space == std::string::npos) return true;
  const std::string op = head.substr(space + 1);
  term->key = Trim(head.substr(0, space));
  if (op == "in")
    term->op = LabelTerm::Op::kIn;
  else if (op == "notin")
    term->op = LabelTerm::Op::kNotIn;
  else
    return true;
  std::string inner = item.substr(open + 1, item.size() - open - 2);
  size_t start = 0;
  while (start <= inner.size()) {
    size_t comma = inner.find(',', start);
    if (comma == std::string::npos) comma = inner.size();
    std::string v = Trim(inner.substr(start, comma - start));
    if (v.empty()) return true;
    term->values.push_back(v);
    start = comma + 1;
  }
  *ok = !term->key.empty() && !term->values.empty();
  return true;
}

std::string FieldOf(const json& pod, const std::string& field) {
  const auto dot = field.find('.');
  const std::string top = field.substr(0, dot), key = field.substr(dot + 1);
  auto obj = pod.find(top);
  if (obj == pod.end() || !obj->is_object()) return "";
  auto v = obj->find(key);
  if (v != obj->end() && v->is_string()) return v->get<std::string>();
  // Unset namespace means "default", as the server stores it.
  return field == "metadata.namespace" ? "default" : "";
}

}  // namespace

bool ParseLabelSelector(const std::string& selector,
                        std::vector<LabelTerm>* out) {
  out->clear();
  if (Trim(selector).empty()) return true;
  std::vector<std::string> items;
  if (!SplitTop(selector, &items)) return false;
  for (const std::string& raw : items) {
    const std::string item = Trim(raw);
    if (item.empty()) return false;
    LabelTerm term;
    bool ok = true;
    if (ParseSetTerm(item, &term, &ok)) {
      if (!ok) return false;
    } else if (auto pos = item.find("!="); pos != std::string::npos) {
      term = {Trim(item.substr(0, pos)),
              LabelTerm::Op::kNotEquals,
              Trim(item.substr(pos + 2)),
              {}};
    } else if (auto pos2 = item.find("=="); pos2 != std::string::npos) {
      term = {Trim(item.substr(0, pos2)),
              LabelTerm::Op::kEquals,
              Trim(item.substr(pos2 + 2)),
              {}};
    } else if (auto pos3 = item.find('='); pos3 != std::string::npos) {
      term = {Trim(item.substr(0, pos3)),
              LabelTerm::Op::kEquals,
              Trim(item.substr(pos3 + 1)),
              {}};
    } else if (item.front() == '!') {
      term = {Trim(item.substr(1)), LabelTerm::Op::kNotExists, "", {}};
    } else {
      term = {item, LabelTerm::Op::kExists, "", {}};
    }
    if (term.key.empty() || term.key.find(' ') != std::string::npos)
      return false;
    out->push_back(std::move(term));
  }
  return true;
}

bool LabelsMatch(const std::vector<LabelTerm>& terms, const json& labels) {
  for (const LabelTerm& term : terms) {
    const bool is_obj = labels.is_object();
    auto it = is_obj ? labels.find(term.key) : labels.end();
    const bool has = is_obj && it != labels.end() && it->is_string();
    const std::string value = has ? it->get<std::string>() : "";
    const bool in = has && std::find(term.values.begin(), term.values.end(),
                                     value) != term.values.end();
    bool holds = true;
    switch (term.op) {
      case LabelTerm::Op::kExists:
        holds = has;
        break;
      case LabelTerm::Op::kNotExists:
        holds = !has;
        break;
      case LabelTerm::Op::kEquals:
        holds = has && value == term.value;
        break;
      case LabelTerm::Op::kNotEquals:
        holds = !has || value != term.value;
        break;
      case LabelTerm::Op::kIn:
        holds = in;
        break;
      case LabelTerm::Op::kNotIn:
        holds = !in;
        break;
    }
    if (!holds) return false;
  }
  return true;
}

bool ParseFieldSelector(const std::string& selector,
                        std::vector<FieldTerm>* out) {
  out->clear();
  if (selector.empty()) return true;
  size_t start = 0;
  while (start <= selector.size()) {
    size_t comma = selector.find(',', start);
    if (comma == std::string::npos) comma = selector.size();
    const std::string item = selector.substr(start, comma - start);
    start = comma + 1;
    FieldTerm term;
    size_t pos = item.find("!=");
    size_t skip = 2;
    if (pos != std::string::npos) {
      term.equals = false;
    } else if ((pos = item.find("==")) == std::string::npos) {
      pos = item.find('=');
      skip = 1;
    }
    if (pos == std::string::npos) return false;
    term.field = item.substr(0, pos);
    term.value = item.substr(pos + skip);
    if (term.field != "spec.nodeName" && term.field != "metadata.name" &&
        term.field != "metadata.namespace")
      return false;
    out->push_back(std::move(term));
  }
  return true;
}

bool FieldsMatch(const std::vector<FieldTerm>& terms, const json& pod) {
  for (const FieldTerm& t : terms)
    if ((FieldOf(pod, t.field) == t.value) != t.equals) return false;
  return true;
}

}  // namespace trainscope::testing
