#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "profiler/outputs.h"
#include "trainscope/html_text.h"

namespace trainscope::profiler {
namespace {

struct Node {
  std::string name;
  int64_t value = 0;
  std::map<std::string, std::unique_ptr<Node>> children;
  int depth = 0;
};

// Builds the tree from folded lines; returns the deepest depth.
int Parse(const std::string& folded, Node* root) {
  int max_depth = 0;
  std::string_view text(folded);
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    size_t space = line.rfind(' ');
    if (space == std::string_view::npos) continue;
    int64_t value = 0;
    std::string_view number = line.substr(space + 1);
    if (std::from_chars(number.data(), number.data() + number.size(), value)
            .ec != std::errc()) {
      continue;
    }
    root->value += value;
    Node* node = root;
    std::string_view frames = line.substr(0, space);
    int depth = 0;
    while (!frames.empty()) {
      size_t semi = frames.find(';');
      std::string name(frames.substr(0, semi));
      frames.remove_prefix(semi == std::string_view::npos ? frames.size()
                                                          : semi + 1);
      auto& child = node->children[name];
      if (!child) {
        child = std::make_unique<Node>();
        child->name = name;
        child->depth = depth + 1;
      }
      child->value += value;
      node = child.get();
      max_depth = std::max(max_depth, ++depth);
    }
  }
  return max_depth;
}

// Warm colours for user code, blue-green for kernel and marker frames; the
// hue is stable per name so the same function looks the same everywhere.
std::string Colour(const std::string& name) {
  const size_t h = std::hash<std::string>{}(name);
  const bool marker = !name.empty() && name.front() == '[';
  const bool kernel_like = name.find("__") == 0 || name.find("do_") == 0 ||
                           name.find("sys_") != std::string::npos;
  char buf[32];
  if (marker) {
    std::snprintf(buf, sizeof buf, "rgb(%d,%d,%d)", 160 + int(h % 40),
                  160 + int(h % 40), 200);
  } else if (kernel_like) {
    std::snprintf(buf, sizeof buf, "rgb(%d,%d,%d)", 80 + int(h % 60),
                  170 + int((h >> 8) % 50), 170);
  } else {
    std::snprintf(buf, sizeof buf, "rgb(%d,%d,%d)", 220 + int(h % 35),
                  80 + int((h >> 8) % 120), 40 + int((h >> 16) % 40));
  }
  return buf;
}

constexpr double kWidth = 1200;
constexpr double kMargin = 10;
constexpr int kRow = 17;
constexpr double kMinWidth = 0.3;  // narrower frames are not drawn
constexpr double kCharWidth = 6.6;

void Draw(const Node& node, double x, double total, int height,
          const std::string& unit, std::string* out) {
  const double w = (kWidth - 2 * kMargin) * double(node.value) / total;
  if (w < kMinWidth) return;
  const int y = height - kMargin - (node.depth + 1) * kRow;
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.2f%%", 100.0 * double(node.value) / total);
  const std::string name = node.depth == 0 ? "all" : node.name;
  *out += "<g><title>" + HtmlEscape(name) + " (" + std::to_string(node.value) +
          " " + unit + ", " + pct + ")</title><rect x=\"" + std::to_string(x) +
          "\" y=\"" + std::to_string(y) + "\" width=\"" + std::to_string(w) +
          "\" height=\"" + std::to_string(kRow - 1) + "\" fill=\"" +
          Colour(name) + "\" rx=\"2\"/>";
  const size_t fits = static_cast<size_t>((w - 6) / kCharWidth);
  if (fits >= 3) {
    std::string label =
        name.size() <= fits ? name : name.substr(0, fits - 2) + "..";
    *out += "<text x=\"" + std::to_string(x + 3) + "\" y=\"" +
            std::to_string(y + kRow - 5) + "\">" + HtmlEscape(label) +
            "</text>";
  }
  *out += "</g>\n";
  double child_x = x;
  for (const auto& [child_name, child] : node.children) {
    Draw(*child, child_x, total, height, unit, out);
    child_x += (kWidth - 2 * kMargin) * double(child->value) / total;
  }
}

}  // namespace

std::string FlameGraphSvg(const std::string& folded, const std::string& title,
                          const std::string& unit) {
  Node root;
  const int depth = Parse(folded, &root);
  const int height = static_cast<int>(2 * kMargin) + (depth + 1) * kRow + 24;
  std::string out =
      "<?xml version=\"1.0\" standalone=\"no\"?>\n"
      "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
      std::to_string(static_cast<int>(kWidth)) + "\" height=\"" +
      std::to_string(height) + "\" viewBox=\"0 0 " +
      std::to_string(static_cast<int>(kWidth)) + " " + std::to_string(height) +
      "\" data-total=\"" + std::to_string(root.value) + "\" data-unit=\"" +
      HtmlEscape(unit) +
      "\">\n<style>text{font:11px monospace;fill:#000;pointer-events:none}"
      "rect:hover{stroke:#000;stroke-width:0.5}</style>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#fdfdf6\"/>\n"
      "<text x=\"" +
      std::to_string(kWidth / 2 - 4 * double(title.size())) +
      "\" y=\"18\" style=\"font-size:14px\">" + HtmlEscape(title) + "</text>\n";
  if (root.value > 0) {
    Draw(root, kMargin, double(root.value), height, unit, &out);
  } else {
    out += "<text x=\"20\" y=\"40\">no samples</text>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace trainscope::profiler
