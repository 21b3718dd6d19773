#include "trainscope/base64.h"

namespace trainscope {
namespace {

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

bool DecodeBase64(std::string_view in, std::string* out) {
  out->clear();
  if (in.size() % 4 != 0) return false;
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    for (int j = 0; j < 4; ++j) {
      const char c = in[i + j];
      const bool last_group = i + 4 == in.size();
      v[j] = (c == '=' && last_group && j >= 2) ? -2 : Base64Value(c);
      if (v[j] == -1) return false;
    }
    if (v[2] == -2 && v[3] != -2) return false;
    out->push_back(static_cast<char>((v[0] << 2) | (v[1] >> 4)));
    if (v[2] == -2) break;
    out->push_back(static_cast<char>(((v[1] & 15) << 4) | (v[2] >> 2)));
    if (v[3] == -2) break;
    out->push_back(static_cast<char>(((v[2] & 3) << 6) | v[3]));
  }
  return true;
}

}  // namespace trainscope
