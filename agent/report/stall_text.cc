#include "report/stall_text.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <vector>

#include "diagnosis/diagnosis.h"
#include "report_page/model.h"

namespace trainscope {
namespace {

using nlohmann::json;

// A terminal shows this many ranks; a 200-rank job's full table is in
// --json. Suspects are always shown.
constexpr size_t kMaxRows = 40;

constexpr size_t kColumns = 11;
using Cells = std::array<std::string, kColumns>;
const Cells kHeader = {"",    "POD",   "NODE",   "ROLE",   "STATE",   "PROCS",
                       "CPU", "QUIET", "TX B/s", "RX B/s", "WAITS ON"};
// Numbers read best right-aligned.
constexpr std::array<bool, kColumns> kRight = {
    false, false, false, false, false, false, true, true, true, true, false};

const json& Field(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it != j.end() ? *it : kNull;
}

std::string Text(const json& v) {
  return v.is_string() && !v.get_ref<const std::string&>().empty()
             ? v.get<std::string>()
             : "-";
}

std::string Format(const char* format, double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// "0", "850", "12.3k", "4.56M": bytes per second in a narrow column.
std::string Rate(const json& v) {
  if (!v.is_number()) return "-";
  const double r = std::max(0.0, v.get<double>());
  if (r < 1e3) return Format("%.0f", r);
  if (r < 1e6) return Format("%.3gk", r / 1e3);
  if (r < 1e9) return Format("%.3gM", r / 1e6);
  return Format("%.3gG", r / 1e9);
}

std::string Seconds(const json& v) {
  return v.is_number() ? Format("%.1f s", v.get<double>()) : "-";
}

std::string Cores(const json& v) {
  return v.is_number() ? Format("%.2f", v.get<double>()) : "-";
}

std::string OrDash(std::string text) { return text.empty() ? "-" : text; }

bool Suspect(const json& rank) {
  const json& s = Field(rank, "suspect");
  return s.is_boolean() && s.get<bool>();
}

Cells RowOf(const json& rank) {
  return {Suspect(rank) ? "*" : "",
          Text(Field(rank, "pod")),
          Text(Field(rank, "node")),
          Text(Field(rank, "role")),
          Text(Field(rank, "state")),
          OrDash(page::ProcessCounts(Field(rank, "processes"))),
          Cores(Field(rank, "cpu_cores")),
          Seconds(Field(rank, "quiet_seconds")),
          Rate(Field(rank, "transmit_bytes_per_second")),
          Rate(Field(rank, "receive_bytes_per_second")),
          Field(rank, "unanswered_peer").is_string()
              ? Text(Field(rank, "unanswered_peer"))
              : ""};
}

// The rows shown: every suspect, then the other ranks in the evidence's
// order while there is room.
std::vector<Cells> ShownRows(const json& ranks, size_t* left_out) {
  std::vector<Cells> rows;
  size_t others_room = kMaxRows;
  for (const auto& r : ranks) {
    if (Suspect(r) && others_room > 0) --others_room;
  }
  *left_out = 0;
  for (const auto& r : ranks) {
    if (!r.is_object()) continue;
    if (!Suspect(r)) {
      if (others_room == 0) {
        ++*left_out;
        continue;
      }
      --others_room;
    }
    rows.push_back(RowOf(r));
  }
  return rows;
}

std::string Aligned(const std::vector<Cells>& rows, const std::string& indent) {
  std::array<size_t, kColumns> width{};
  for (const auto& row : rows) {
    for (size_t c = 0; c < kColumns; ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t c = 0; c < kColumns; ++c) {
      if (width[c] == 0) continue;  // a column no rank fills
      const std::string pad(width[c] - row[c].size(), ' ');
      line += kRight[c] ? pad + row[c] : row[c] + pad;
      line += "  ";
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

std::string Heading(const json& evidence, const std::string& indent) {
  std::string heading = indent + "per rank (* = suspect";
  if (const json& why = Field(evidence, "suspect_reason"); why.is_string()) {
    heading += ", " + why.get<std::string>();
  }
  heading += ")";
  if (const json& t = Field(evidence, "threshold_seconds"); t.is_number()) {
    heading += Format("; stall threshold %.0f s", t.get<double>());
  }
  if (const json& m = Field(evidence, "median_step_seconds"); m.is_number()) {
    heading += Format(", median step %.3g s", m.get<double>());
  }
  if (const json& p = Field(evidence, "unreachable_peer"); p.is_string()) {
    heading += ", unreachable peer " + p.get<std::string>();
  }
  return heading + ":\n";
}

}  // namespace

std::string StallRanksText(const json& evidence, const std::string& indent) {
  const json& ranks = Field(evidence, "ranks");
  if (!ranks.is_array() || ranks.empty()) return "";
  size_t left_out = 0;
  std::vector<Cells> rows = ShownRows(ranks, &left_out);
  if (rows.empty()) return "";
  Cells header = kHeader;
  // Without any waited-on peer the column is left out entirely.
  const bool waits = std::any_of(rows.begin(), rows.end(), [](const Cells& r) {
    return !r.back().empty();
  });
  if (!waits) header.back().clear();
  rows.insert(rows.begin(), header);
  std::string out = Heading(evidence, indent) + Aligned(rows, indent);
  if (left_out > 0) {
    out += indent + "... and " + std::to_string(left_out) +
           " more ranks (--json has them all)\n";
  }
  return out;
}

std::vector<const json*> StallsFirst(const json& diagnoses) {
  std::vector<const json*> out;
  if (!diagnoses.is_array()) return out;
  for (const auto& d : diagnoses) out.push_back(&d);
  // 0: critical stall, 1: other stall, 2: anything else.
  auto rank = [](const json* d) {
    const json& kind = Field(*d, "kind");
    if (!kind.is_string() ||
        kind.get_ref<const std::string&>() != diagnosis::kTrainingStalled) {
      return 2;
    }
    return Field(*d, "severity") == "critical" ? 0 : 1;
  };
  std::stable_sort(out.begin(), out.end(), [&](const json* a, const json* b) {
    return rank(a) < rank(b);
  });
  return out;
}

}  // namespace trainscope
