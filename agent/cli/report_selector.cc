#include "cli/report_selector.h"

#include <cctype>
#include <string_view>

#include "cli/report_prometheus.h"

namespace trainscope::cli {
namespace {

bool NameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool NameChar(char c) {
  return NameStart(c) || std::isdigit(static_cast<unsigned char>(c));
}

void SkipSpaces(std::string_view& s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
}

// A PromQL string literal in "…" or '…' with the common escapes, or a raw
// `…` string; `out` gets its value.
Status ParseQuoted(std::string_view& s, std::string* out) {
  const char quote = s.front();
  s.remove_prefix(1);
  out->clear();
  while (!s.empty() && s.front() != quote) {
    char c = s.front();
    s.remove_prefix(1);
    if (c == '\\' && quote != '`') {
      if (s.empty()) break;
      const char e = s.front();
      s.remove_prefix(1);
      switch (e) {
        case '\\':
        case '"':
        case '\'':
          c = e;
          break;
        case 'n':
          c = '\n';
          break;
        case 't':
          c = '\t';
          break;
        default:
          return Status::Error(std::string("unsupported escape \\") + e +
                               " in a label value");
      }
    }
    out->push_back(c);
  }
  if (s.empty()) return Status::Error("unterminated quoted label value");
  s.remove_prefix(1);
  return Status::Ok();
}

// name op "value"
Status ParseMatcher(std::string_view& s, std::string* canonical) {
  SkipSpaces(s);
  if (s.empty() || !NameStart(s.front())) {
    return Status::Error("expected a label name (letters, digits, '_')");
  }
  size_t n = 1;
  while (n < s.size() && NameChar(s[n])) ++n;
  const std::string name(s.substr(0, n));
  s.remove_prefix(n);
  SkipSpaces(s);
  std::string op;
  for (const char* candidate : {"=~", "!~", "!=", "="}) {
    if (s.starts_with(candidate)) {
      op = candidate;
      break;
    }
  }
  if (op.empty()) {
    return Status::Error("expected =, !=, =~ or !~ after '" + name + "'");
  }
  s.remove_prefix(op.size());
  SkipSpaces(s);
  if (s.empty() ||
      (s.front() != '"' && s.front() != '\'' && s.front() != '`')) {
    return Status::Error("the value of '" + name + "' must be quoted, e.g. " +
                         name + op + "\"a\"");
  }
  std::string value;
  if (Status q = ParseQuoted(s, &value); !q.ok()) return q;
  // JSON quoting is valid PromQL quoting.
  *canonical = name + op + PromQLString(value);
  return Status::Ok();
}

Status ParseOne(std::string_view s, std::string* matchers) {
  SkipSpaces(s);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  if (s.starts_with("{")) {
    if (!s.ends_with("}")) return Status::Error("'{' without '}'");
    s = s.substr(1, s.size() - 2);
  }
  SkipSpaces(s);
  if (s.empty()) return Status::Error("no label matcher");
  while (true) {
    std::string one;
    if (Status m = ParseMatcher(s, &one); !m.ok()) return m;
    if (!matchers->empty()) *matchers += ",";
    *matchers += one;
    SkipSpaces(s);
    if (s.empty()) return Status::Ok();
    if (s.front() != ',') {
      return Status::Error("unexpected '" + std::string(s.substr(0, 10)) +
                           "' (matchers are separated by ',')");
    }
    s.remove_prefix(1);
    SkipSpaces(s);
    if (s.empty()) return Status::Ok();  // trailing comma, as PromQL allows
  }
}

}  // namespace

bool IsLabelName(std::string_view name) {
  if (name.empty() || !NameStart(name.front())) return false;
  for (char c : name)
    if (!NameChar(c)) return false;
  return true;
}

Status ParseSelectors(const std::vector<std::string>& selectors,
                      std::string* matchers) {
  matchers->clear();
  for (const auto& selector : selectors) {
    if (Status s = ParseOne(selector, matchers); !s.ok()) {
      return Status::Error("'" + selector + "': " + s.message() +
                           " (expected label matchers such as "
                           "cluster=\"a\",env=~\"prod.*\")");
    }
  }
  return Status::Ok();
}

}  // namespace trainscope::cli
