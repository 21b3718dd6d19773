#include "trainscope/terminal_text.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

namespace trainscope {
namespace {

// Length of the well-formed UTF-8 sequence at `s[i]` and its code point;
// 0 when the bytes there are not UTF-8 (overlong, surrogate, truncated).
size_t Utf8At(std::string_view s, size_t i, char32_t* cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  size_t len = 0;
  char32_t min = 0;
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2, min = 0x80, *cp = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3, min = 0x800, *cp = b & 0x0F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4, min = 0x10000, *cp = b & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    *cp = (*cp << 6) | (byte(i + k) & 0x3F);
  }
  if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) {
    return 0;
  }
  return len;
}

// Code points a terminal acts on rather than shows: C1 controls (U+009B is
// CSI), and the bidi overrides and separators that reorder or break lines.
bool Invisible(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// One escape ("\\x1b", "\\u{202e}") of a byte or code point.
std::string Escaped(const char* format, uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

std::string TerminalSafe(std::string_view raw, size_t max_bytes) {
  while (!raw.empty() && (raw.back() == '\n' || raw.back() == '\r' ||
                          raw.back() == ' ' || raw.back() == '\t')) {
    raw.remove_suffix(1);
  }
  std::string out;
  out.reserve(std::min(raw.size(), max_bytes) + 16);
  size_t i = 0;
  while (i < raw.size()) {
    const unsigned char b = static_cast<unsigned char>(raw[i]);
    std::string piece;
    size_t used = 1;
    if (b >= 0x20 && b < 0x7F) {
      piece.assign(1, static_cast<char>(b));
    } else if (b < 0x80) {
      piece = Escaped("\\x%02x", b);  // C0 (ESC, newline, ...) and DEL
    } else {
      char32_t cp = 0;
      used = Utf8At(raw, i, &cp);
      if (used == 0) {
        used = 1;
        piece = Escaped("\\x%02x", b);
      } else if (Invisible(cp)) {
        piece = Escaped("\\u{%04x}", static_cast<uint32_t>(cp));
      } else {
        piece.assign(raw.substr(i, used));
      }
    }
    if (out.size() + piece.size() > max_bytes) {
      out += "... (" + std::to_string(raw.size()) + " bytes)";
      return out;
    }
    out += piece;
    i += used;
  }
  return out;
}

}  // namespace trainscope
